// Package bench runs probe sweeps: one variant of a batch script per GPU
// profile, so the same work can be measured on each.
package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/jobdir"
	"github.com/migadvisor/migadvisor/slurm"
)

// SweepFileName is the record a sweep leaves in its directory.
const SweepFileName = "sweep.json"

// SweepVersion is the version of sweep.json this build writes and reads.
const SweepVersion = 1

// Sweep is the content of sweep.json.
type Sweep struct {
	Version     int                 `json:"version"`
	Script      string              `json:"script"` // absolute path of the original
	Fingerprint string              `json:"fingerprint"`
	Site        string              `json:"site"`
	Created     time.Time           `json:"created"`
	Profiles    []string            `json:"profiles"` // in site order
	Variants    map[string]*Variant `json:"variants"` // profile -> variant
}

// Variant is one rewritten script.
type Variant struct {
	Profile   string `json:"profile"`
	File      string `json:"file"` // relative to the sweep directory
	Request   string `json:"request"`
	JobName   string `json:"job_name"`
	Partition string `json:"partition,omitempty"`
	QoS       string `json:"qos,omitempty"`
	// Monitored: the variant reruns itself under 'migadvisor monitor'.
	Monitored bool   `json:"monitored"`
	NoMonitor string `json:"no_monitor,omitempty"` // why it is not, when monitoring was asked for

	// Set by sweep --submit.
	JobID     string    `json:"job_id,omitempty"`
	Cluster   string    `json:"cluster,omitempty"`
	Submitted time.Time `json:"submitted,omitempty"`
	Stdout    string    `json:"stdout,omitempty"`
}

// SweepOptions says what to sweep and where.
type SweepOptions struct {
	Script   *slurm.Script
	Site     *catalog.Site
	Profiles []string // empty: every profile of the site
	OutDir   string
	Force    bool               // write variants even when the script has lint errors
	Monitor  *slurm.MonitorWrap // nil: variants run without the GPU memory monitor
	Now      func() time.Time
}

// LintError is returned when the script (or a variant) has lint errors.
type LintError struct {
	File     string
	Findings []advisor.Finding
}

func (e *LintError) Error() string {
	var b strings.Builder
	for _, f := range e.Findings {
		if f.Severity == advisor.SeverityError {
			fmt.Fprintf(&b, "%s:%d: %s: %s\n", e.File, f.Line, f.Code, f.Message)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fixedByRewrite are lint codes a variant corrects by construction.
var fixedByRewrite = map[string]bool{
	"multi-mig-slice": true, "unknown-gpu-type": true, "wrong-partition": true, "qos-not-allowed": true,
}

// planned is a variant and its bytes, before anything is written.
type planned struct {
	variant *Variant
	data    []byte
}

// WriteSweep writes OutDir/<profile>.sh for each profile and OutDir/sweep.json.
// Nothing is written unless every variant could be made and checked.
func WriteSweep(opt SweepOptions) (*Sweep, error) {
	if err := checkScript(opt); err != nil {
		return nil, err
	}
	profiles, err := selectProfiles(opt.Site, opt.Profiles)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(opt.Script.Path)
	if err != nil {
		return nil, fmt.Errorf("locate %s: %w", opt.Script.Path, err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	sw := &Sweep{Version: SweepVersion, Script: abs, Fingerprint: opt.Script.Fingerprint(), Site: opt.Site.Name,
		Created: now().UTC().Truncate(time.Second), Variants: map[string]*Variant{}}
	var plan []planned
	for _, p := range profiles {
		pv, err := planVariant(opt, p, sw.Fingerprint)
		if err != nil {
			return nil, err
		}
		plan = append(plan, pv)
		sw.Profiles = append(sw.Profiles, p.Name)
		sw.Variants[p.Name] = pv.variant
	}
	if err := prepareDir(opt.OutDir, abs, plan); err != nil {
		return nil, err
	}
	for _, pv := range plan {
		if err := atomicfile.Write(filepath.Join(opt.OutDir, pv.variant.File), pv.data, 0o755); err != nil {
			return nil, err
		}
	}
	if err := SaveSweep(opt.OutDir, sw); err != nil {
		return nil, err
	}
	return sw, nil
}

// SaveSweep writes DIR/sweep.json.
func SaveSweep(dir string, sw *Sweep) error {
	record, err := json.MarshalIndent(sw, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", SweepFileName, err)
	}
	return atomicfile.Write(filepath.Join(dir, SweepFileName), append(record, '\n'), 0o644)
}

// checkScript refuses a script with lint errors that a variant would keep.
func checkScript(opt SweepOptions) error {
	if opt.Force {
		return nil
	}
	var kept []advisor.Finding
	for _, f := range advisor.Lint(opt.Script, opt.Site) {
		if f.Severity == advisor.SeverityError && !fixedByRewrite[f.Code] {
			kept = append(kept, f)
		}
	}
	if len(kept) > 0 {
		return &LintError{File: opt.Script.Path, Findings: kept}
	}
	return nil
}

func selectProfiles(site *catalog.Site, names []string) ([]*catalog.Profile, error) {
	if len(names) == 0 {
		names = site.ProfileNames()
	}
	var out []*catalog.Profile
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		p, ok := site.Profile(n)
		if !ok {
			return nil, fmt.Errorf("site %s has no profile %q (profiles: %s)", site.Name, n, strings.Join(site.ProfileNames(), ", "))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// PlanVariant decides how the script changes for a profile: its GPU request,
// the partition and QoS when the site requires others, and the job name.
func PlanVariant(s *slurm.Script, site *catalog.Site, p *catalog.Profile) slurm.Variant {
	res := s.Resources
	v := slurm.Variant{GPURequest: p.Request}
	part := res.Partition
	if len(p.Partitions) > 0 && !allIn(strings.Split(part, ","), p.Partitions) {
		part, v.Partition = p.Partitions[0], p.Partitions[0]
	}
	switch sp, ok := site.Partition(strings.Split(part, ",")[0]); {
	case p.QoS != "" && res.QoS != p.QoS:
		v.QoS = p.QoS
	case ok && res.QoS != "" && !sp.QoSAllowed(res.QoS):
		v.QoS = firstLiteral(sp.QoS)
	}
	base := res.JobName
	if base == "" {
		base = strings.TrimSuffix(filepath.Base(s.Path), filepath.Ext(s.Path))
	}
	v.JobName = base + "-" + p.Name
	return v
}

func planVariant(opt SweepOptions, p *catalog.Profile, fingerprint string) (planned, error) {
	sv := PlanVariant(opt.Script, opt.Site, p)
	data, err := opt.Script.Rewrite(sv)
	if err != nil {
		return planned{}, fmt.Errorf("rewrite for %s: %w", p.Name, err)
	}
	file := p.Name + ".sh"
	v := &Variant{Profile: p.Name, File: file, Request: p.Request, JobName: sv.JobName, Partition: sv.Partition, QoS: sv.QoS}
	if opt.Monitor != nil {
		if wrapped, err := opt.Monitor.Wrap(opt.Script.Path, data); err != nil {
			v.NoMonitor = err.Error()
		} else {
			data, v.Monitored = wrapped, true
		}
	}
	if err := verifyVariant(file, data, opt, p, fingerprint); err != nil {
		return planned{}, err
	}
	return planned{variant: v, data: data}, nil
}

// verifyVariant reads the variant back: it must ask for exactly the profile
// and keep the fingerprint, or it is not written.
func verifyVariant(file string, data []byte, opt SweepOptions, p *catalog.Profile, fingerprint string) error {
	back := slurm.Parse(file, data)
	gpus := back.Resources.GPUs
	switch {
	case len(gpus) != 1 || gpus[0].Type != p.GRESType || gpus[0].Count != p.GPUCount:
		return fmt.Errorf("internal error: the %s variant does not read back as %s (%+v)", p.Name, p.Request, gpus)
	case back.Fingerprint() != fingerprint:
		return fmt.Errorf("internal error: the %s variant changed the script's work", p.Name)
	}
	if fs := advisor.Lint(back, opt.Site); advisor.HasErrors(fs) && !opt.Force {
		return &LintError{File: filepath.Join(opt.OutDir, file), Findings: fs}
	}
	return nil
}

// prepareDir creates the directory and refuses to overwrite files that are
// not from an earlier sweep of the same script.
func prepareDir(dir, script string, plan []planned) error {
	if err := jobdir.Make(dir); err != nil {
		return fmt.Errorf("sweep directory: %w", err)
	}
	prev, err := ReadSweep(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		prev = nil
	case err != nil:
		return err
	case prev.Script != script:
		return fmt.Errorf("%s already holds a sweep of %s; choose another --out", dir, prev.Script)
	}
	for _, pv := range plan {
		target := filepath.Join(dir, pv.variant.File)
		if same, _ := sameFile(target, script); same {
			return fmt.Errorf("%s would overwrite the script itself; choose another --out", target)
		}
		if _, err := os.Lstat(target); err == nil && (prev == nil || prev.Variants[pv.variant.Profile] == nil) {
			return fmt.Errorf("%s exists and was not written by a sweep of this script; choose another --out", target)
		}
	}
	return nil
}

// ReadSweep reads DIR/sweep.json.
func ReadSweep(dir string) (*Sweep, error) {
	file := filepath.Join(dir, SweepFileName)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var sw Sweep
	if err := json.Unmarshal(data, &sw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if sw.Version != SweepVersion {
		return nil, fmt.Errorf("%s: sweep format version %d is not supported (this migadvisor reads %d)", file, sw.Version, SweepVersion)
	}
	return &sw, nil
}

func sameFile(a, b string) (bool, error) {
	ia, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(ia, ib), nil
}

func allIn(items, allowed []string) bool {
	for _, it := range items {
		if !slices.Contains(allowed, strings.TrimSpace(it)) {
			return false
		}
	}
	return true
}

func firstLiteral(patterns []string) string {
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			return p
		}
	}
	return ""
}
