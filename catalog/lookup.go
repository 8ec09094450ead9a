package catalog

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed sites/*.toml
var builtinSites embed.FS

// DefaultSite is the site used when nothing else is configured.
const DefaultSite = "wulver"

// SystemSiteFile is where administrators install a site-wide site file.
var SystemSiteFile = "/etc/migadvisor/site.toml"

// BuiltinNames lists the sites compiled into the binary.
func BuiltinNames() []string {
	entries, _ := fs.ReadDir(builtinSites, "sites")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// Builtin loads a built-in site by name.
func Builtin(name string) (*Site, error) {
	data, err := builtinSites.ReadFile("sites/" + name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("no built-in site %q (built-in: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	var s *Site
	if decoded, ok := generatedSites[name]; ok {
		// Decoded at build time (builtin_gen.go): the sbatch wrapper reads
		// the site on every submission, and decoding its TOML cost half a
		// millisecond of the three it may add.
		s = decoded()
		s.Source = builtinSource + name
		err = s.resolve(s.Source, data)
	} else {
		s, err = Parse(builtinSource+name, data)
	}
	if err != nil {
		return nil, fmt.Errorf("built-in site %q: %w", name, err)
	}
	return s, nil
}

// BuiltinTOML returns a built-in site's file, for users to copy and edit.
func BuiltinTOML(name string) ([]byte, error) {
	return builtinSites.ReadFile("sites/" + name + ".toml")
}

// builtinSource prefixes a built-in site's name in Site.Source.
const builtinSource = "builtin:"

// TOML is the site file the site was read from, byte for byte: the
// embedded one of a built-in site, else the file at Source.
func (s *Site) TOML() ([]byte, error) {
	if name, ok := strings.CutPrefix(s.Source, builtinSource); ok {
		return BuiltinTOML(name)
	}
	data, err := os.ReadFile(s.Source)
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", s.Name, err)
	}
	return data, nil
}

// exportHeader opens a built-in site's file as Export gives it: where it
// came from, and what is the new site's to give. It names no site: a copy
// taken at another site must never speak in the built-in one's name.
const exportHeader = `# A site file for migadvisor, started from a site built into it: the name
# and the title are yours to give (notices and reports say the title), and
# every figure below is the built-in site's: check each against your cluster
# (docs/admin/site-file.md; on a GPU node, 'migadvisor catalog discover').
`

// Export is the site file to copy and edit (catalog export): a site file's
// own bytes; for a built-in site, its file with the opening comment that
// describes that site replaced by exportHeader, and its name and title
// left empty for the new site's. Notices say the title: a copy that kept
// the built-in one's would tell another site's users they ran on it. An
// exported built-in site loads only once it is named (the site needs a
// name), so it cannot be installed as it is.
func (s *Site) Export() ([]byte, error) {
	data, err := s.TOML()
	if err != nil || !strings.HasPrefix(s.Source, builtinSource) {
		return data, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++ // the built-in site's own description
	}
	var b strings.Builder
	b.WriteString(exportHeader)
	top := true // before the first table: where name and title are
	for _, line := range withoutGPUNodes(lines[i:]) {
		key, _, _ := strings.Cut(line, "=")
		switch key = strings.TrimSpace(key); {
		case strings.HasPrefix(strings.TrimSpace(line), "["):
			top = false
		case top && key == "name":
			line = "name = \"\"   # required: your site's short name (a word), which messages say\n"
		case top && key == "title":
			line = "title = \"\"  # your site as its users know it, which notices and reports say (else the name)\n"
		}
		b.WriteString(line)
	}
	return []byte(b.String()), nil
}

// withoutGPUNodes leaves out a built-in site's [[gpu_nodes]] (its own
// nodes, which plan would take for the new site's) and the comment above
// them, and puts a commented example in their place.
func withoutGPUNodes(lines []string) []string {
	var out []string
	inNodes, hinted := false, false
	for k, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case t == "[[gpu_nodes]]":
			inNodes = true
			if !hinted {
				for len(out) > 0 && strings.HasPrefix(strings.TrimSpace(out[len(out)-1]), "#") {
					out = out[:len(out)-1] // the comment that describes them
				}
				out = append(out, gpuNodesHint)
				hinted = true
			}
			continue
		case inNodes && strings.HasPrefix(t, "[") || inNodes && t == "" && !nextIsGPUNodes(lines[k+1:]):
			inNodes = false
		}
		if !inNodes {
			out = append(out, line)
		}
	}
	return out
}

// nextIsGPUNodes: the next line that is not blank opens another [[gpu_nodes]].
func nextIsGPUNodes(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return t == "[[gpu_nodes]]"
		}
	}
	return false
}

const gpuNodesHint = `# Your GPU nodes and how each GPU is cut today, for migadvisor plan
# (docs/admin/plan.md); without them plan reads Slurm's nodes:
# [[gpu_nodes]]
# name = "gpu"
# count = 4                                      # nodes
# gpus = 4                                       # GPUs per node
# layout = "3g.40gb,2g.20gb,1g.10gb,1g.10gb"     # each GPU's slices, or "full"
`

// Resolve finds the site to use. choice is the --site flag (or its env twin
// MIGADVISOR_SITE): a built-in name or a file path. Without it the user's
// $XDG_CONFIG_HOME/migadvisor/site.toml, then SystemSiteFile, then the
// built-in DefaultSite are tried, in that order.
func Resolve(choice string) (*Site, error) {
	s, _, err := Locate(choice)
	return s, err
}

// Origin says where Resolve found the site in force, as 'migadvisor
// doctor' tells it.
type Origin struct {
	// Named: --site (or MIGADVISOR_SITE) chose it; else the lookup did.
	Named bool
	// File is the site file read, "" for a built-in site (Named or the
	// default).
	File string
	// Default: no file was found, the built-in DefaultSite is in force.
	Default bool
	// Unread are the site files the lookup found after the one it read:
	// the system file under a user's, which the user's shadows.
	Unread []string
}

// Locate is Resolve, with where the site came from. A file it could not
// read is its error, Origin naming that file.
func Locate(choice string) (*Site, Origin, error) {
	if choice != "" {
		if looksLikePath(choice) {
			s, err := LoadFile(choice)
			return s, Origin{Named: true, File: choice}, err
		}
		s, err := Builtin(choice)
		return s, Origin{Named: true}, err
	}
	var o Origin
	for _, file := range []string{userSiteFile(), SystemSiteFile} {
		if file == "" {
			continue
		}
		_, err := os.Stat(file)
		switch {
		case err == nil && o.File != "":
			o.Unread = append(o.Unread, file)
		case err == nil:
			o.File = file
		case !errors.Is(err, fs.ErrNotExist) && o.File == "":
			return nil, Origin{File: file}, fmt.Errorf("site file %s: %w", file, err)
		}
	}
	if o.File != "" {
		s, err := LoadFile(o.File)
		return s, o, err
	}
	o.Default = true
	s, err := Builtin(DefaultSite)
	return s, o, err
}

func userSiteFile() string {
	dir, err := os.UserConfigDir() // $XDG_CONFIG_HOME or ~/.config
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "migadvisor", "site.toml")
}

func looksLikePath(s string) bool {
	if strings.ContainsRune(s, os.PathSeparator) || strings.HasSuffix(s, ".toml") {
		return true
	}
	_, err := os.Stat(s)
	return err == nil
}
