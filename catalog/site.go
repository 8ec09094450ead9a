// Package catalog describes sites: their partitions, the GPU profiles users may
// request, and how jobs are charged in service units (SU). Sites are versioned
// TOML files; the built-in site "wulver" needs no configuration.
package catalog

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/migadvisor/migadvisor/slurm"
)

// FormatVersion is the site-file format this build reads.
const FormatVersion = 1

// FullGPU is the slice name of a whole GPU without MIG.
const FullGPU = "full"

// Called is the site as notices and pages say it: its title, else its
// name (a site file made by catalog discover, or exported, may have none).
func (s *Site) Called() string {
	if s.Title != "" {
		return s.Title
	}
	return s.Name
}

// Site is one cluster's GPU profiles and charging rules.
type Site struct {
	Version          int           `toml:"version"`
	Name             string        `toml:"name"`
	Title            string        `toml:"title"`
	GPUModel         string        `toml:"gpu_model"`
	MaxWalltime      Walltime      `toml:"max_walltime"`
	DefaultMemPerCPU Size          `toml:"default_mem_per_cpu"`
	UntypedGPU       string        `toml:"untyped_gpu"` // profile an untyped --gres=gpu:N gets
	Billing          Billing       `toml:"billing"`
	Partitions       []Partition   `toml:"partitions"`
	Profiles         []Profile     `toml:"profiles"`
	WorkPatterns     []WorkPattern `toml:"work_patterns"`
	GPUNodes         []GPUNodes    `toml:"gpu_nodes"` // the site's GPU nodes and today's layout (fleet.go)
	Advice           Advice        `toml:"advice"`
	History          History       `toml:"history"`
	Report           Report        `toml:"report"`

	Source string           `toml:"-"` // where the site was read from
	model  *GPUModel        // nil when gpu_model is not built in
	acct   *accountingIndex // the GPU types accounting may name each profile by (accounting.go)
}

// WorkPattern teaches collect a tool's own report of work done in job output:
// regex's first group is the number, unit what it counts.
type WorkPattern struct {
	Name  string `toml:"name"`
	Regex string `toml:"regex"`
	Unit  string `toml:"unit"`
}

// Advice tunes recommendations for the site. Zero values take migadvisor's
// defaults (0.8 and 0.05).
type Advice struct {
	// LowRiskShare: a GPU memory need below this share of a profile's usable
	// memory is a low OOM risk.
	LowRiskShare float64 `toml:"low_risk_share"`
	// SUTolerance: a smaller profile is preferred when its SU is within this
	// share of the lowest.
	SUTolerance float64 `toml:"su_tolerance"`
}

// History names the site-wide history: a database that admins fill with
// `migadvisor collect --all-users` and users read (never write) beside their
// own, so that advice covers the runs of everyone who ran the same script.
type History struct {
	SiteDB string `toml:"site_db"` // absolute path; "" when the site has none
	// SiteIndex is the site's advice index (migadvisor publish), which the
	// sbatch wrapper reads; "": advice.idx beside site_db.
	SiteIndex string `toml:"site_index"`
	// SiteStore is the MySQL option file of a site history kept in
	// MariaDB/MySQL (advisor/base/history/mariadb), which collect --all-users
	// writes and publish publishes from; "": none. Only its path is here:
	// the file, with the password, is readable by the admins alone.
	SiteStore string `toml:"site_store"`
}

// SiteIndexPath is the site's advice index: site_index, else advice.idx
// in site_db's directory (where 'publish' writes it); "" when the site
// names neither.
func (h History) SiteIndexPath() string {
	switch {
	case h.SiteIndex != "":
		return h.SiteIndex
	case h.SiteDB != "":
		return path.Join(path.Dir(h.SiteDB), "advice.idx")
	}
	return ""
}

// Report sets the thresholds of the admins' savings report (migadvisor
// report) and how its notices reach users. Zero values take the defaults
// (ReportDefaults).
type Report struct {
	// MinSUSaved: a script (of one user) is listed, and its user told,
	// only when a smaller slice would have saved at least this many SU in
	// the period.
	MinSUSaved float64 `toml:"min_su_saved"`
	// MinRuns: the runs a script needs in the history before it is judged.
	MinRuns int `toml:"min_runs"`
	// NotifyCommand is the mail command notices go through: an argument
	// vector (never a shell) whose {user} and {subject} are replaced, the
	// message on its standard input. Empty: notices go to files only.
	NotifyCommand []string `toml:"notify_command"`
	// NotifyEveryDays: a user hears about a script at most once in this
	// many days.
	NotifyEveryDays int `toml:"notify_every_days"`
	// NotifyContact is who users may write to, named in each notice.
	NotifyContact string `toml:"notify_contact"`
}

// ReportDefaults are the report's thresholds where the site sets none.
var ReportDefaults = Report{MinSUSaved: 10, MinRuns: 2, NotifyEveryDays: 30}

// WithDefaults fills the thresholds the site leaves unset.
func (r Report) WithDefaults() Report {
	if r.MinSUSaved == 0 {
		r.MinSUSaved = ReportDefaults.MinSUSaved
	}
	if r.MinRuns == 0 {
		r.MinRuns = ReportDefaults.MinRuns
	}
	if r.NotifyEveryDays == 0 {
		r.NotifyEveryDays = ReportDefaults.NotifyEveryDays
	}
	return r
}

// Billing holds the SU formula's parameters:
//
//	SU/h = cpu_weight × max(CPUs, RAM / memory_per_cpu) + gpu_weight × GPU memory / gpu_memory
//
// where GPU memory is the billed memory of the profile requested.
type Billing struct {
	CPUWeight    float64  `toml:"cpu_weight"`
	MemoryPerCPU Size     `toml:"memory_per_cpu"` // RAM that counts as one CPU; 0 = RAM not billed
	GPUWeight    float64  `toml:"gpu_weight"`     // SU per hour of gpu_memory
	GPUMemory    Size     `toml:"gpu_memory"`
	FreeQoS      []string `toml:"free_qos"` // QoS names (or globs like "high_*") that are not charged
}

// Partition is a Slurm partition as far as advice needs it.
type Partition struct {
	Name             string   `toml:"name"`
	NodeCPUs         int      `toml:"node_cpus"`
	NodeMemory       Size     `toml:"node_memory"`
	MaxWalltime      Walltime `toml:"max_walltime"`
	DefaultMemPerCPU Size     `toml:"default_mem_per_cpu"`
	QoS              []string `toml:"qos"` // QoS allowed here (globs); empty = any
	Charged          *bool    `toml:"charged"`
	CPUWeight        *float64 `toml:"cpu_weight"`
	MemoryPerCPU     *Size    `toml:"memory_per_cpu"`
	Default          bool     `toml:"default"` // Slurm's default partition
}

// Profile is something a user can request: a MIG slice or a whole GPU.
type Profile struct {
	Name           string   `toml:"name"`    // canonical, e.g. "1g.10gb" or "full"
	Request        string   `toml:"request"` // exact sbatch option, e.g. "--gres=gpu:a100_10g:1"
	Slice          string   `toml:"slice"`   // MIG profile of the GPU model, or "full"; default Name
	Partitions     []string `toml:"partitions"`
	QoS            string   `toml:"qos"`        // the QoS this profile needs, if any
	GRESTypes      []string `toml:"gres_types"` // other Slurm type names for this profile, in scripts and accounting
	SMs            int      `toml:"sms"`
	UsableMemory   Size     `toml:"usable_memory"`
	BilledMemory   Size     `toml:"billed_memory"` // GPU memory in the SU formula
	BandwidthShare float64  `toml:"bandwidth_share"`
	L2Share        float64  `toml:"l2_share"` // share of the GPU's L2 cache; default bandwidth_share
	Description    string   `toml:"description"`

	// Derived from Request.
	GRESType string `toml:"-"`
	GPUCount int    `toml:"-"`
}

// IsMIG reports whether the profile is a MIG slice rather than a whole GPU.
func (p *Profile) IsMIG() bool { return p.Slice != FullGPU }

// FileError is an error in a site file, with its line when known.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	// One line, whatever the file held: the TOML parser quotes what it
	// could not read, newlines and all.
	msg := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.Msg)
	switch {
	case e.File == "" && e.Line > 0: // a value the caller knows the file of
		return fmt.Sprintf("line %d: %s", e.Line, msg)
	case e.File == "": // a value of the command line, say
		return msg
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("%s: %s", e.File, msg)
}

// LoadFile reads and checks a site file.
func LoadFile(file string) (*Site, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read site file: %w", err)
	}
	return Parse(file, data)
}

// Parse reads a site file's contents; name is used in error messages.
// The file is decoded once (the sbatch wrapper reads it on every
// submission); its version is checked before anything else is judged, so
// a newer format is named as such rather than by one of its new keys.
func Parse(name string, data []byte) (*Site, error) {
	s, err := decodeSite(name, data)
	if err != nil {
		return nil, err
	}
	if err := s.resolve(name, data); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeSite decodes a site file, checks its version and that it has no
// key the Site does not, and resolves nothing.
func decodeSite(name string, data []byte) (*Site, error) {
	s := &Site{Source: name}
	md, err := toml.Decode(string(data), s)
	if err != nil {
		var head struct {
			Version int `toml:"version"`
		}
		if _, herr := toml.Decode(string(data), &head); herr != nil {
			return nil, decodeError(name, herr) // the version itself does not decode
		}
		if verr := checkVersion(name, data, head.Version); verr != nil {
			return nil, verr
		}
		return nil, decodeError(name, err)
	}
	if err := checkVersion(name, data, s.Version); err != nil {
		return nil, err
	}
	if err := undecodedError(name, data, md); err != nil {
		return nil, err
	}
	if err := s.Report.zeroSet(func(key string) bool { return md.IsDefined("report", key) }); err != nil {
		return nil, &FileError{name, lineOf(locateKeys(data), "report", 0, err.key), err.msg}
	}
	return s, nil
}

// checkVersion refuses a site file of another format version, or of none.
func checkVersion(name string, data []byte, version int) error {
	switch {
	case version == 0:
		return &FileError{name, 1, fmt.Sprintf("the site file must start with version = %d", FormatVersion)}
	case version != FormatVersion:
		return &FileError{name, lineOf(locateKeys(data), "", 0, "version"),
			fmt.Sprintf("site format version %d is not supported (this migadvisor reads version %d)", version, FormatVersion)}
	}
	return nil
}

// decodeStrict decodes TOML and rejects keys the target does not have.
func decodeStrict(name string, data []byte, v any) error {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		return decodeError(name, err)
	}
	return undecodedError(name, data, md)
}

// undecodedError names the first key of the file its target has no field
// for, with its line; nil when there is none.
func undecodedError(name string, data []byte, md toml.MetaData) error {
	undecoded := md.Undecoded()
	if len(undecoded) == 0 {
		return nil
	}
	k := undecoded[0]
	table, key := "", k.String()
	if len(k) > 1 {
		table, key = strings.Join(k[:len(k)-1], "."), k[len(k)-1]
	}
	line := 0
	for _, p := range locateKeys(data) {
		if p.table == table && p.key == key {
			line = p.line
			break
		}
	}
	where := "at the top level"
	if table != "" {
		where = "in [" + table + "]"
	}
	return &FileError{name, line, fmt.Sprintf("unknown key %q %s", key, where)}
}

func decodeError(name string, err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		return &FileError{name, perr.Position.Line, perr.Message}
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	line := lineFromDecodeError(msg)
	if i := strings.Index(msg, "): "); i >= 0 && line > 0 {
		msg = msg[i+3:]
	}
	return &FileError{name, line, msg}
}

// resolve fills derived fields and checks the site for consistency.
func (s *Site) resolve(file string, data []byte) error {
	fail := func(table string, index int, key, format string, args ...any) error {
		// Key positions are only needed for an error, so they are found only then.
		return &FileError{file, lineOf(locateKeys(data), table, index, key), fmt.Sprintf(format, args...)}
	}
	if s.Name == "" {
		return fail("", 0, "name", "the site needs a name")
	}
	if s.GPUModel != "" {
		s.model, _ = LookupModel(s.GPUModel)
	}
	if len(s.Profiles) == 0 {
		return fail("", 0, "version", "the site declares no [[profiles]]")
	}
	partitions := map[string]bool{}
	for i, p := range s.Partitions {
		if p.Name == "" || partitions[p.Name] {
			return fail("partitions", i, "name", "partition %d needs a unique name", i+1)
		}
		partitions[p.Name] = true
	}
	seenName := map[string]bool{}
	for i := range s.Profiles {
		p := &s.Profiles[i]
		if p.Name == "" || seenName[p.Name] {
			return fail("profiles", i, "name", "profile %d needs a unique name", i+1)
		}
		seenName[p.Name] = true
		if err := s.resolveProfile(p); err != nil {
			return fail("profiles", i, err.key, "profile %q: %s", p.Name, err.msg)
		}
		for _, part := range p.Partitions {
			if len(s.Partitions) > 0 && !partitions[part] {
				return fail("profiles", i, "partitions", "profile %q names partition %q, which the site does not declare", p.Name, part)
			}
		}
	}
	if err := s.checkTypeNames(); err != nil {
		return fail("profiles", err.profile, err.key, "%s", err.msg)
	}
	s.acct = &accountingIndex{}
	if s.UntypedGPU != "" && !seenName[s.UntypedGPU] {
		return fail("", 0, "untyped_gpu", "untyped_gpu names %q, which is not a profile", s.UntypedGPU)
	}
	if a := s.Advice.LowRiskShare; a < 0 || a >= 0.95 {
		return fail("advice", 0, "low_risk_share", "low_risk_share must be between 0 and 0.95 (a share of usable memory), not %g", a)
	}
	if t := s.Advice.SUTolerance; t < 0 || t >= 1 {
		return fail("advice", 0, "su_tolerance", "su_tolerance must be between 0 and 1 (a share of SU), not %g", t)
	}
	if db := s.History.SiteDB; db != "" && !path.IsAbs(db) {
		return fail("history", 0, "site_db", "site_db must be an absolute path (users read it from anywhere), not %q", db)
	}
	if idx := s.History.SiteIndex; idx != "" && !path.IsAbs(idx) {
		return fail("history", 0, "site_index", "site_index must be an absolute path (users read it from anywhere), not %q", idx)
	}
	if f := s.History.SiteStore; f != "" && !path.IsAbs(f) {
		return fail("history", 0, "site_store", "site_store must be an absolute path (the admins' option file), not %q", f)
	}
	if err := s.Report.check(); err != nil {
		return fail("report", 0, err.key, "%s", err.msg)
	}
	if i, key, msg := s.checkGPUNodes(); i >= 0 {
		return fail("gpu_nodes", i, key, "%s", msg)
	}
	for i, w := range s.WorkPatterns {
		if w.Name == "" || w.Unit == "" {
			return fail("work_patterns", i, "name", "work pattern %d needs a name and a unit", i+1)
		}
		re, err := regexp.Compile(w.Regex)
		if err != nil {
			return fail("work_patterns", i, "regex", "work pattern %q: %v", w.Name, err)
		}
		if re.NumSubexp() < 1 {
			return fail("work_patterns", i, "regex", "work pattern %q: the regex needs a group around the number", w.Name)
		}
	}
	return nil
}

// profileKeyError is a bad value of a profile's key.
type profileKeyError struct {
	profile int
	keyError
}

// checkTypeNames refuses a Slurm type name two profiles have: the requests'
// first, then each gres_types alias against them all, so that the error
// names the alias that repeats a request's. Names are compared as
// accounting compares them (AccountingKey): A100_10g and a100-10g are one.
func (s *Site) checkTypeNames() *profileKeyError {
	owner := map[string]int{}
	dup := func(i int, key, t string) *profileKeyError {
		k := AccountingKey(t)
		other, seen := owner[k]
		if k == "" || seen && other == i {
			return nil
		}
		if seen {
			return &profileKeyError{i, keyError{key, fmt.Sprintf("profiles %q and %q both use GPU type %q", s.Profiles[other].Name, s.Profiles[i].Name, t)}}
		}
		owner[k] = i
		return nil
	}
	for i, p := range s.Profiles {
		if err := dup(i, "request", p.GRESType); err != nil {
			return err
		}
	}
	for i, p := range s.Profiles {
		for _, t := range p.GRESTypes {
			if err := dup(i, "gres_types", t); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyError is a bad value of a site file key, found before its line is.
type keyError struct{ key, msg string }

// resolveProfile derives a profile's request details and fills SMs, memory,
// bandwidth and L2 shares from the GPU model where the site does not set them.
func (s *Site) resolveProfile(p *Profile) *keyError {
	if p.Request == "" {
		return &keyError{"request", "needs request = \"--gres=gpu:TYPE:1\" (the exact sbatch option)"}
	}
	gpu, err := slurm.ParseGPURequest(p.Request)
	if err != nil {
		return &keyError{"request", err.Error()}
	}
	p.GRESType, p.GPUCount = gpu.Type, gpu.Count
	if p.Slice == "" {
		p.Slice = p.Name
	}
	if err := s.fillFromModel(p); err != nil {
		return err
	}
	// Without a model, L2 follows the memory slices, as on all but the
	// 1g profiles with doubled memory.
	setDefault(&p.L2Share, p.BandwidthShare)
	switch {
	case p.SMs <= 0:
		return &keyError{"sms", "needs sms (the GPU model does not give it)"}
	case p.UsableMemory <= 0:
		return &keyError{"usable_memory", "needs usable_memory (the GPU model does not give it)"}
	case p.BilledMemory <= 0:
		return &keyError{"billed_memory", "needs billed_memory (the GPU memory the SU formula charges)"}
	case p.BandwidthShare <= 0 || p.BandwidthShare > 1:
		return &keyError{"bandwidth_share", "needs bandwidth_share between 0 and 1"}
	case p.L2Share <= 0 || p.L2Share > 1:
		return &keyError{"l2_share", fmt.Sprintf("needs l2_share between 0 and 1 (a share of the GPU's L2 cache), not %g", p.L2Share)}
	}
	return nil
}

func (s *Site) fillFromModel(p *Profile) *keyError {
	m := s.model
	if m == nil {
		return nil
	}
	if p.Slice == FullGPU {
		setDefault(&p.SMs, m.SMs)
		setDefault(&p.UsableMemory, m.UsableMemory)
		setDefault(&p.BilledMemory, m.Memory)
		setDefault(&p.BandwidthShare, 1)
		setDefault(&p.L2Share, 1)
		return nil
	}
	mp, ok := m.MIGProfile(p.Slice)
	if !ok {
		var names []string
		for _, q := range m.Profiles {
			names = append(names, q.Name)
		}
		return &keyError{"slice", fmt.Sprintf("%s has no MIG profile %q (it has %s, or \"full\")", m.Name, p.Slice, strings.Join(names, ", "))}
	}
	setDefault(&p.SMs, mp.SMs)
	setDefault(&p.UsableMemory, mp.Memory)
	if gb, ok := NominalGB(mp.Name); ok {
		setDefault(&p.BilledMemory, Size(gb*1024))
	}
	setDefault(&p.BandwidthShare, float64(mp.MemorySlices)/float64(m.MemorySlices))
	setDefault(&p.L2Share, float64(mp.L2Slices)/float64(m.MemorySlices))
	return nil
}

func setDefault[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}

// Model returns the site's built-in GPU model, if it is one.
func (s *Site) Model() (*GPUModel, bool) { return s.model, s.model != nil }

// Profile finds a profile by canonical name.
func (s *Site) Profile(name string) (*Profile, bool) {
	for i := range s.Profiles {
		if s.Profiles[i].Name == name {
			return &s.Profiles[i], true
		}
	}
	return nil, false
}

// ProfileNamed finds a profile as a user names it: by its name (1g.10gb)
// or by the Slurm GPU type that asks for it (a100_10g). LookupProfile is
// the same with an error that lists the site's profiles.
func (s *Site) ProfileNamed(name string) (*Profile, bool) {
	if p, ok := s.Profile(name); ok {
		return p, true
	}
	if name == "" {
		return nil, false
	}
	return s.ProfileForType(name)
}

// ProfileNameOf is the profile of count GPUs of type gpuType, as
// accounting records them (AllocTRES gres/gpu:a100_10g=1,
// gres/gpu:nvidia_a100_3g.39gb=1: ProfileForAccounting); "" for none, or a
// GPU the site has no profile for.
func (s *Site) ProfileNameOf(gpuType string, count int) string {
	if count <= 0 {
		return ""
	}
	if p, ok := s.ProfileForAccounting(gpuType); ok {
		return p.Name
	}
	return ""
}

// ProfileForType maps a Slurm GPU type (from --gres, --gpus or accounting) to
// a profile; "" is an untyped request, which gets the site's untyped_gpu.
func (s *Site) ProfileForType(gresType string) (*Profile, bool) {
	if gresType == "" {
		if s.UntypedGPU == "" {
			return nil, false
		}
		return s.Profile(s.UntypedGPU)
	}
	for i := range s.Profiles {
		p := &s.Profiles[i]
		if p.GRESType == gresType {
			return p, true
		}
		for _, t := range p.GRESTypes {
			if t == gresType {
				return p, true
			}
		}
	}
	return nil, false
}

// ProfileNames lists the profiles in site order.
func (s *Site) ProfileNames() []string {
	names := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		names[i] = p.Name
	}
	return names
}

// Partition finds a partition by name.
func (s *Site) Partition(name string) (*Partition, bool) {
	for i := range s.Partitions {
		if s.Partitions[i].Name == name {
			return &s.Partitions[i], true
		}
	}
	return nil, false
}

// DefaultPartition is the partition Slurm uses when a script names none.
func (s *Site) DefaultPartition() (*Partition, bool) {
	for i := range s.Partitions {
		if s.Partitions[i].Default {
			return &s.Partitions[i], true
		}
	}
	return nil, false
}

// MaxWalltimeFor is the longest time limit allowed in a partition ("" = the
// site's), and false when the site sets none.
func (s *Site) MaxWalltimeFor(partition string) (slurm.TimeLimit, bool) {
	if p, ok := s.Partition(partition); ok && p.MaxWalltime.IsSet() {
		return p.MaxWalltime.TimeLimit, true
	}
	return s.MaxWalltime.TimeLimit, s.MaxWalltime.IsSet()
}

// DefaultMemPerCPUFor is the memory per CPU a job gets when it names none.
func (s *Site) DefaultMemPerCPUFor(partition string) Size {
	if p, ok := s.Partition(partition); ok && p.DefaultMemPerCPU > 0 {
		return p.DefaultMemPerCPU
	}
	return s.DefaultMemPerCPU
}

// QoSAllowed reports whether a QoS may be used in a partition.
func (p *Partition) QoSAllowed(qos string) bool {
	return len(p.QoS) == 0 || matchAny(p.QoS, qos)
}

// matchAny matches name against shell-style patterns such as "high_*".
func matchAny(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// threshold is one of the report's numbers, for the checks.
type threshold struct {
	v         float64
	key, unit string
	def       float64
}

func (r Report) thresholds() []threshold {
	d := ReportDefaults
	return []threshold{{r.MinSUSaved, "min_su_saved", "SU", d.MinSUSaved}, {float64(r.MinRuns), "min_runs", "runs", float64(d.MinRuns)},
		{float64(r.NotifyEveryDays), "notify_every_days", "days", float64(d.NotifyEveryDays)}}
}

func (t threshold) refused() *keyError {
	return &keyError{t.key, fmt.Sprintf("%s must be more than 0 %s (leave it out for %g), not %g", t.key, t.unit, t.def, t.v)}
}

// check refuses thresholds that mean nothing and a notify command that
// could not run.
func (r Report) check() *keyError {
	for _, t := range r.thresholds() {
		if t.v < 0 {
			return t.refused()
		}
	}
	if len(r.NotifyCommand) > 0 && !path.IsAbs(r.NotifyCommand[0]) {
		return &keyError{"notify_command", fmt.Sprintf("notify_command must start with the command's absolute path (it runs without a shell or PATH), not %q", r.NotifyCommand[0])}
	}
	return nil
}

// zeroSet refuses a threshold the file sets to 0, which would read as
// unset and take the default. set says whether the file sets a key (the
// decoder's metadata: only files are checked, never a built-in site).
func (r Report) zeroSet(set func(key string) bool) *keyError {
	for _, t := range r.thresholds() {
		if t.v == 0 && set(t.key) {
			return t.refused()
		}
	}
	return nil
}
