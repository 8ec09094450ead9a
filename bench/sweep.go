package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/internal/jobdir"
	"github.com/migadvisor/migadvisor/internal/versioned"
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
	Time      string `json:"time,omitempty"` // the --time it asks for, when not the script's
	// Monitored: the variant reruns itself under 'migadvisor monitor'.
	Monitored bool   `json:"monitored"`
	NoMonitor string `json:"no_monitor,omitempty"` // why it is not, when monitoring was asked for

	// Settings are what the variant exports for its run, as NAME=VALUE
	// (--no-prealloc): said in the variant and in its job's output.
	Settings []string `json:"settings,omitempty"`

	// Emulates are the profiles an emulation job runs (sweep --emulate):
	// its own profile is the whole GPU it asks for.
	Emulates []string `json:"emulates,omitempty"`

	// Set by sweep --submit.
	JobID     string    `json:"job_id,omitempty"`
	Cluster   string    `json:"cluster,omitempty"`
	Submitted time.Time `json:"submitted,omitzero"` // zero: not submitted
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
	// AsOneGPU sweeps a script that uses several GPUs as if it used one:
	// each variant asks for one slice or GPU. Without it such a script is
	// refused on MIG slices, and its whole-GPU variants keep its GPU count.
	AsOneGPU bool
	// Time is the --time every variant asks for ("" keeps the script's):
	// a probe after a run that reached its limit needs a longer one.
	Time string
	// Emulate writes one job on the site's whole GPU that runs the script
	// once per profile under 'migadvisor emulate' (its Profiles are the
	// sweep's), instead of a job per profile: for a GPU not cut into slices.
	Emulate *slurm.EmulateWrap
	// EmulateBudget bounds each emulated run (0: the script's --time).
	EmulateBudget time.Duration
	// NoPrealloc: variants export slurm.NoPreallocation, so that the
	// frameworks that hold more than they use allocate what they use and
	// the monitor's peak is the need (--no-prealloc).
	NoPrealloc bool
}

// MultiGPUError refuses to sweep a script that uses several GPUs on MIG
// slices, which cannot stand in for them.
type MultiGPUError struct {
	File  string
	Line  int
	Why   string   // what uses several GPUs, from lint.MultiGPU
	Whole []string // the site's whole-GPU profiles
}

func (e *MultiGPUError) Error() string {
	whole := ""
	if len(e.Whole) > 0 {
		whole = "probe whole GPUs only with --profiles " + strings.Join(e.Whole, ",") + ", or "
	}
	return fmt.Sprintf("%s:%d: %s, which one MIG slice cannot stand in for: a CUDA process sees one MIG device "+
		"and slices have no NVLink peer-to-peer, so NCCL cannot join them; %sa single-GPU version of the script on slices "+
		"(--as-one-gpu sweeps this one on one GPU each, if it can run so)", e.File, e.Line, e.Why, whole)
}

// LintError is returned when the script (or a variant) has lint errors.
type LintError struct {
	File     string
	Findings []lint.Finding
}

func (e *LintError) Error() string {
	var b strings.Builder
	for _, f := range e.Findings {
		if f.Severity == lint.SeverityError {
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
	gpus, err := checkMultiGPU(opt, profiles)
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
	if opt.Emulate != nil {
		pv, err := planEmulation(opt, profiles, sw.Fingerprint, gpus)
		if err != nil {
			return nil, err
		}
		plan = append(plan, pv)
		sw.Profiles = append(sw.Profiles, pv.variant.Profile)
		sw.Variants[pv.variant.Profile] = pv.variant
	}
	for _, p := range profiles {
		if opt.Emulate != nil {
			break
		}
		pv, err := planVariant(opt, p, sw.Fingerprint, gpus)
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

// checkMultiGPU refuses to sweep a script that uses several GPUs on MIG
// slices (unless AsOneGPU), and gives the number of GPUs its whole-GPU
// variants ask for in all: the script's own request, or 1.
func checkMultiGPU(opt SweepOptions, profiles []*catalog.Profile) (gpus int, err error) {
	if opt.AsOneGPU {
		return 1, nil
	}
	n, line, why := lint.MultiGPU(opt.Script)
	if n <= 1 {
		return 1, nil
	}
	for _, p := range profiles {
		if p.IsMIG() {
			var whole []string
			for _, q := range opt.Site.ProfilesBySize() {
				if !q.IsMIG() {
					whole = append(whole, q.Name)
				}
			}
			return 0, &MultiGPUError{File: opt.Script.Path, Line: line, Why: why, Whole: whole}
		}
	}
	return max(opt.Script.Resources.GPUCount(), 1), nil
}

// checkScript refuses a script with lint errors that a variant would keep.
func checkScript(opt SweepOptions) error {
	if opt.Force {
		return nil
	}
	var kept []lint.Finding
	for _, f := range lint.Check(opt.Script, opt.Site) {
		if f.Severity == lint.SeverityError && !fixedByRewrite[f.Code] {
			kept = append(kept, f)
		}
	}
	if len(kept) > 0 {
		return &LintError{File: opt.Script.Path, Findings: kept}
	}
	return nil
}

// selectProfiles looks up the profiles named, by name or GRES type, each
// once, in the order given; none named: the site's, in its order.
func selectProfiles(site *catalog.Site, names []string) ([]*catalog.Profile, error) {
	if len(names) == 0 {
		names = site.ProfileNames()
	}
	var out []*catalog.Profile
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		p, err := site.LookupProfile(n)
		if err != nil {
			return nil, err
		}
		if !seen[p.Name] {
			seen[p.Name] = true
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

func planVariant(opt SweepOptions, p *catalog.Profile, fingerprint string, gpus int) (planned, error) {
	sv := PlanVariant(opt.Script, opt.Site, p)
	sv.Time = opt.Time
	count := p.GPUCount
	if !p.IsMIG() && gpus > 1 {
		req, n, err := requestFor(p.Request, gpus, opt.Script.Resources)
		if err != nil {
			return planned{}, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		sv.GPURequest, count = req, n
	}
	data, err := opt.Script.Rewrite(sv)
	if err != nil {
		return planned{}, fmt.Errorf("rewrite for %s: %w", p.Name, err)
	}
	file := p.Name + ".sh"
	v := &Variant{Profile: p.Name, File: file, Request: sv.GPURequest, JobName: sv.JobName, Partition: sv.Partition, QoS: sv.QoS, Time: sv.Time}
	if opt.Monitor != nil {
		if wrapped, err := opt.Monitor.Wrap(opt.Script.Path, data); err != nil {
			v.NoMonitor = err.Error()
		} else {
			data, v.Monitored = wrapped, true
		}
	}
	if data, err = withoutPrealloc(opt, data, v); err != nil {
		return planned{}, err
	}
	if err := verifyVariant(file, data, opt, p, count, fingerprint); err != nil {
		return planned{}, err
	}
	return planned{variant: v, data: data}, nil
}

// planEmulation is the one job of an emulation: the script on the site's
// whole GPU, wrapped to run once per profile under migadvisor emulate, with
// a --time that covers every run.
func planEmulation(opt SweepOptions, profiles []*catalog.Profile, fingerprint string, gpus int) (planned, error) {
	if gpus > 1 {
		return planned{}, fmt.Errorf("%s uses %d GPUs; an emulation runs the job on one (--as-one-gpu, if it can run so)", opt.Script.Path, gpus)
	}
	whole := slices.IndexFunc(opt.Site.Profiles, func(p catalog.Profile) bool { return !p.IsMIG() })
	if whole < 0 {
		return planned{}, fmt.Errorf("site %s has no whole-GPU profile to emulate its slices on", opt.Site.Name)
	}
	p := &opt.Site.Profiles[whole]
	sv := PlanVariant(opt.Script, opt.Site, p)
	sv.JobName = strings.TrimSuffix(sv.JobName, "-"+p.Name) + "-emulate"
	wrap := *opt.Emulate
	wrap.Profiles = nil
	for _, q := range profiles {
		wrap.Profiles = append(wrap.Profiles, q.Name)
	}
	total, per, err := emulationTime(opt, len(profiles), sv.Partition)
	if err != nil {
		return planned{}, err
	}
	sv.Time = total
	if per > 0 { // each run stops at its share, so that the smallest profile cannot use up the job
		wrap.Budget = per.String()
	}
	data, err := opt.Script.Rewrite(sv)
	if err != nil {
		return planned{}, fmt.Errorf("rewrite for the emulation: %w", err)
	}
	if data, err = wrap.Wrap(opt.Script.Path, data); err != nil {
		return planned{}, err
	}
	file := "emulate.sh"
	v := &Variant{Profile: p.Name, File: file, Request: sv.GPURequest, JobName: sv.JobName,
		Partition: sv.Partition, QoS: sv.QoS, Time: sv.Time, Emulates: wrap.Profiles}
	if data, err = withoutPrealloc(opt, data, v); err != nil {
		return planned{}, err
	}
	if err := verifyVariant(file, data, opt, p, p.GPUCount, fingerprint); err != nil {
		return planned{}, err
	}
	return planned{variant: v, data: data}, nil
}

// withoutPrealloc adds the --no-prealloc block to a variant, before the
// monitor's (whose process and the job's must see the settings), and
// lists the settings in its record.
func withoutPrealloc(opt SweepOptions, data []byte, v *Variant) ([]byte, error) {
	if !opt.NoPrealloc {
		return data, nil
	}
	data, err := slurm.WithoutPreallocation(opt.Script.Path, data)
	if err != nil {
		return nil, fmt.Errorf("--no-prealloc: %w", err)
	}
	for _, kv := range slurm.NoPreallocation {
		v.Settings = append(v.Settings, kv[0]+"="+kv[1])
	}
	return data, nil
}

// emulationSlack is what an emulation job's --time adds to its runs': each
// run's MPS daemon and monitor start and stop.
const emulationSlack = 5 * time.Minute

// emulationTime is the --time of an emulation of n runs and each run's
// budget: --budget, else the --time given, else the script's, n times over;
// a total beyond the partition's limit asks for a --budget that fits.
func emulationTime(opt SweepOptions, n int, partition string) (total string, per time.Duration, err error) {
	per = opt.EmulateBudget
	if per <= 0 {
		limit := opt.Script.Resources.Time
		if opt.Time != "" {
			if limit, err = slurm.ParseTimeLimit(opt.Time); err != nil {
				return "", 0, fmt.Errorf("--time %s: %w", opt.Time, err)
			}
		}
		if !limit.IsSet() || limit.Unlimited {
			return opt.Time, 0, nil // the partition's limit, as the script would have
		}
		per = limit.Duration
	}
	sum := time.Duration(n)*per + emulationSlack
	if partition == "" {
		partition = opt.Script.Resources.Partition
	}
	if max, ok := opt.Site.MaxWalltimeFor(partition); ok && !max.Unlimited && max.Duration > 0 && sum > max.Duration {
		return "", 0, fmt.Errorf("%d runs of %s each need %s, more than the limit of %s: give each a --budget that fits",
			n, slurm.FormatDuration(per), slurm.FormatDuration(sum), slurm.FormatDuration(max.Duration))
	}
	return slurm.FormatDuration(sum), per, nil
}

// requestFor turns a one-GPU request ("--gres=gpu:a100:1") into one for
// gpus GPUs in all on the script's nodes and tasks ("--gres=gpu:a100:2"),
// and gives the count it writes (per node, per task, or in all for --gpus).
func requestFor(request string, gpus int, res slurm.Resources) (string, int, error) {
	g, err := slurm.ParseGPURequest(request)
	if err != nil {
		return "", 0, err
	}
	count := gpus
	switch g.Option {
	case slurm.OptGPUs:
	case slurm.OptGPUsPerTask:
		count = (gpus + res.Tasks() - 1) / res.Tasks()
	case slurm.OptGPUsPerSocket:
		return "", 0, fmt.Errorf("a request of GPUs per socket (%s) cannot be scaled to %d GPUs", request, gpus)
	default: // --gres and --gpus-per-node count per node
		count = (gpus + res.NodeCount() - 1) / res.NodeCount()
	}
	spec := strconv.Itoa(count)
	if g.Type != "" {
		spec = g.Type + ":" + spec
	}
	if g.Option == slurm.OptGres {
		spec = "gpu:" + spec
	}
	return "--" + g.Option + "=" + spec, count, nil
}

// verifyVariant reads the variant back: it must ask for exactly the profile
// (count GPUs of its type) and keep the fingerprint, or it is not written.
func verifyVariant(file string, data []byte, opt SweepOptions, p *catalog.Profile, count int, fingerprint string) error {
	back := slurm.Parse(file, data)
	gpus := back.Resources.GPUs
	switch {
	case len(gpus) != 1 || gpus[0].Type != p.GRESType || gpus[0].Count != count:
		return fmt.Errorf("internal error: the %s variant does not read back as %d of %s (%+v)", p.Name, count, p.Request, gpus)
	case back.Fingerprint() != fingerprint:
		return fmt.Errorf("internal error: the %s variant changed the script's work", p.Name)
	}
	if fs := lint.Check(back, opt.Site); lint.HasErrors(fs) && !opt.Force {
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
		if fsutil.SameFile(target, script) {
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
	if err := versioned.DecodeJSON(file, data, "sweep", SweepVersion, &sw); err != nil {
		return nil, err
	}
	return &sw, nil
}

// ReadSweeps reads the sweeps of dir: its own sweep.json, else those of its
// subdirectories, as a probe's --ladder writes one per rung; the error of
// dir's own where it has neither.
func ReadSweeps(dir string) ([]*Sweep, error) {
	sw, err := ReadSweep(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return []*Sweep{sw}, err
	}
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return nil, err
	}
	var rungs []*Sweep
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rung, rungErr := ReadSweep(filepath.Join(dir, e.Name()))
		switch {
		case errors.Is(rungErr, fs.ErrNotExist):
		case rungErr != nil:
			return nil, rungErr
		default:
			rungs = append(rungs, rung)
		}
	}
	if len(rungs) == 0 {
		return nil, err
	}
	return rungs, nil
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

// NoGPUWarning is what to say of a script that asks for no GPU, "" for
// one that asks for some: every variant adds its profile's GPU request,
// so the sweep (or the probe) runs it on GPUs it did not ask for.
func NoGPUWarning(s *slurm.Script) string {
	if s.Resources.GPUCount() > 0 {
		return ""
	}
	return s.Path + " asks for no GPU: each variant adds its profile's GPU request (and partition where the site needs one), " +
		"so its jobs run on GPUs it did not ask for"
}
