package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
)

func sweepCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "sweep",
		Usage:     "write one variant of a batch script per GPU profile",
		ArgsUsage: "JOB.sh",
		Description: `Writes DIR/<profile>.sh for each profile and DIR/sweep.json (the script, its
fingerprint, and each profile's variant). A variant differs from JOB.sh only in
its GPU request (exactly the profile's), its job name (suffixed with the
profile), and its partition or QoS where the site requires others; every other
byte is kept. JOB.sh itself is never changed, and files in DIR that an earlier
sweep of the same script did not write are never overwritten. The sweep is also
recorded in the history (--db), linked to the script's fingerprint.

Each variant runs its work under the GPU memory monitor ('migadvisor monitor'):
a block of lines marked "# migadvisor:auto" before the first command reruns the
script under it, so 'collect' learns the job's peak GPU memory. The user's lines
stay as they were, the fingerprint ignores the block, and a job on a node
without migadvisor or NVML runs as it would have. --no-monitor leaves it out;
scripts that are not POSIX shell get no block (sweep says so).

With --submit, each variant is then submitted with sbatch from the current
directory; the job ids are written to sweep.json and the history as sbatch
gives them, and printed. Follow them with 'migadvisor wait --sweep DIR', then
'migadvisor collect'.

The script is linted first: errors a variant cannot fix (DOS line breaks, an
unknown option, a time over the limit...) stop the sweep unless --force.

A script that uses several GPUs (--gres=gpu:a100:2, --gpus=2, several nodes
with GPUs, torchrun --nproc_per_node=2, accelerate launch --num_processes 2,
deepspeed --num_gpus 2, srun with GPUs per task...) is not swept onto MIG
slices: a CUDA process sees one MIG device, and slices have no NVLink
peer-to-peer for NCCL. Sweep whole GPUs only (--profiles full), whose variants
keep the script's GPU count, or a single-GPU version of the script;
--as-one-gpu sweeps it on one slice or GPU each if it can run so.

Examples:
   migadvisor sweep job.sh --out sweep/
   migadvisor sweep --profiles 1g.10gb,full --out sweep/ job.sh
   migadvisor sweep job.sh --out sweep/ --json
   migadvisor sweep job.sh --out sweep/ --submit && migadvisor wait --sweep sweep/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the variants and sweep.json (required)"},
			&cli.StringFlag{Name: "profiles", Usage: "comma-separated profiles (default: all of the site's)"},
			&cli.BoolFlag{Name: "force", Usage: "write variants even if the script has lint errors"},
			asOneGPUFlag(""),
			timeFlag(""),
			&cli.BoolFlag{Name: "submit", Usage: "submit each variant with sbatch and record the job ids"},
			&cli.StringFlag{Name: "workload", Usage: "tag the submitted jobs with a workload name (with --submit)"},
			&cli.BoolFlag{Name: "no-monitor", Usage: "write variants that do not run under the GPU memory monitor"},
			&cli.StringFlag{Name: "monitor-bin", EnvVars: []string{"MIGADVISOR_MONITOR_BIN"},
				Usage: "the migadvisor that jobs run as their monitor, tried before 'migadvisor' on PATH (default: this one)"},
			clusterFlag(),
			slurmBinFlag(),
			jsonFlag(),
		},
		Action: runSweep,
	})
}

func runSweep(c *cli.Context) error {
	path, err := oneArg(c, "JOB.sh")
	if err != nil {
		return err
	}
	if c.String("out") == "" {
		return usageError{"sweep needs --out DIR"}
	}
	site, err := loadSite(c)
	if err != nil {
		return err
	}
	script, err := slurm.ReadScript(path)
	if err != nil {
		return err
	}
	var profiles []string
	if v := c.String("profiles"); v != "" {
		profiles = strings.Split(v, ",")
	}
	limit, err := variantTime(c)
	if err != nil {
		return err
	}
	sw, err := writeSweep(c, bench.SweepOptions{Script: script, Site: site, Profiles: profiles, OutDir: c.String("out"),
		Force: c.Bool("force"), Monitor: monitorWrap(c), AsOneGPU: c.Bool("as-one-gpu"), Time: limit}, "fix them or use --force")
	if err != nil {
		return err
	}
	if c.Bool("submit") {
		if err := submitSweep(c, c.String("out"), sw, c.String("workload")); err != nil {
			printSweep(c, sw)
			return err
		}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, struct {
			Dir string `json:"dir"`
			*bench.Sweep
		}{c.String("out"), sw})
	}
	printSweep(c, sw)
	return nil
}

// writeSweep writes the variants and records the sweep in the history. Lint
// errors are printed, and the error says what to do (hint).
func writeSweep(c *cli.Context, opt bench.SweepOptions, hint string) (*bench.Sweep, error) {
	sw, err := bench.WriteSweep(opt)
	var lintErr *bench.LintError
	if errors.As(err, &lintErr) {
		fmt.Fprintln(c.App.ErrWriter, lintErr.Error())
		return nil, fmt.Errorf("%s has errors a variant would keep; %s", opt.Script.Path, hint)
	}
	if err != nil {
		return nil, err
	}
	if opt.Script.Resources.GPUCount() == 0 {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: warning: %s asks for no GPU: each variant adds its profile's GPU request (and partition where the site needs one), so the probe runs it on GPUs it did not ask for\n", opt.Script.Path)
	}
	if err := recordSweep(c, opt.OutDir, sw); err != nil {
		// The variants are written; the history is a convenience, never a reason to fail.
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: warning: the sweep is not in the history: %v\n", err)
	}
	return sw, nil
}

// asOneGPUFlag lets a script that uses several GPUs be swept on one each;
// prefix begins its usage.
// timeFlag sets every variant's --time (a probe after a run that reached its
// time limit needs a longer one than the script's).
func timeFlag(prefix string) cli.Flag {
	return &cli.StringFlag{Name: "time", Aliases: []string{"t"}, Usage: prefix + "the --time every variant asks for (default: the script's)"}
}

// variantTime reads --time: sbatch's formats, checked before anything is written.
func variantTime(c *cli.Context) (string, error) {
	v := c.String("time")
	if v == "" {
		return "", nil
	}
	if _, err := slurm.ParseTimeLimit(v); err != nil {
		return "", usageError{fmt.Sprintf("--time %q is not a time limit sbatch reads: use minutes (90), 1:30:00 or 2-00:00:00", v)}
	}
	return v, nil
}

func asOneGPUFlag(prefix string) cli.Flag {
	return &cli.BoolFlag{Name: "as-one-gpu", Usage: prefix + "sweep a script that uses several GPUs on one slice or GPU each (it must be able to run so)"}
}

// monitorWrap is how variants reach the monitor: this binary by its absolute
// path (shared file systems make it the compute nodes' too), else PATH.
func monitorWrap(c *cli.Context) *slurm.MonitorWrap {
	if c.Bool("no-monitor") {
		return nil
	}
	bin := c.String("monitor-bin")
	if bin == "" {
		if self, err := os.Executable(); err == nil {
			if real, err := filepath.EvalSymlinks(self); err == nil {
				self = real
			}
			bin = self
		}
	}
	if bin != "" {
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs
		}
	}
	return &slurm.MonitorWrap{Binary: bin}
}

// recordSweep links the script's fingerprint to the sweep in the history.
func recordSweep(c *cli.Context, out string, sw *bench.Sweep) error {
	dir, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	st, err := history.Open(c.Context, dbPath(c))
	if err != nil {
		return err
	}
	defer st.Close()
	rec := history.Sweep{Dir: dir, Script: sw.Script, Fingerprint: sw.Fingerprint, Site: sw.Site, Created: sw.Created}
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		rec.Variants = append(rec.Variants, history.Variant{Profile: v.Profile, File: v.File, Request: v.Request, JobName: v.JobName})
	}
	return st.RecordSweep(c.Context, rec)
}

func printSweep(c *cli.Context, sw *bench.Sweep) {
	w := c.App.Writer
	dir := c.String("out")
	t := newTable(w)
	submitted := sw.Variants[sw.Profiles[0]].JobID != ""
	if submitted {
		fmt.Fprint(t, "JOB ID\t")
	}
	fmt.Fprintln(t, "PROFILE\tVARIANT\tREQUEST\tJOB NAME\tCHANGED")
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		var changed []string
		if v.Partition != "" {
			changed = append(changed, "partition="+v.Partition)
		}
		if v.QoS != "" {
			changed = append(changed, "qos="+v.QoS)
		}
		if v.Time != "" {
			changed = append(changed, "time="+v.Time)
		}
		if submitted {
			fmt.Fprintf(t, "%s\t", orDash(v.JobID))
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", name, filepath.Join(dir, v.File), v.Request, v.JobName, orDash(strings.Join(changed, " ")))
	}
	t.Flush()
	noted := map[string]bool{}
	for _, name := range sw.Profiles {
		if why := sw.Variants[name].NoMonitor; why != "" && !noted[why] {
			noted[why] = true
			fmt.Fprintf(c.App.ErrWriter, "migadvisor: the variants run without the GPU memory monitor: %s\n", why)
		}
	}
	if isTTY(w) {
		fmt.Fprintf(w, "\nfingerprint %s; record in %s\n", sw.Fingerprint, filepath.Join(dir, bench.SweepFileName))
		if submitted {
			fmt.Fprintf(w, "next: migadvisor wait --sweep %s && migadvisor collect\n", dir)
		}
	}
}

// submitSweep submits the variants and links each job to the script in the history.
func submitSweep(c *cli.Context, dir string, sw *bench.Sweep, workload string) error {
	subErr := bench.SubmitSweep(c.Context, newClusterSubmitter(c), dir, sw, time.Now)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var subs []history.Submission
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		if v.JobID == "" {
			continue
		}
		subs = append(subs, history.Submission{Cluster: v.Cluster, JobID: v.JobID, Fingerprint: sw.Fingerprint, Source: sw.Script,
			Script: filepath.Join(abs, v.File), Profile: name, SweepDir: abs, Workload: workload,
			WorkDir: workingDir(), Stdout: v.Stdout, Submitted: v.Submitted})
	}
	if err := recordSubmissions(c, subs); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "migadvisor: warning: the jobs are in %s but not in the history: %v\n",
			filepath.Join(dir, bench.SweepFileName), err)
	}
	return subErr
}

func recordSubmissions(c *cli.Context, subs []history.Submission) error {
	if len(subs) == 0 {
		return nil
	}
	st, err := openHistoryToWrite(c)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.RecordSubmissions(c.Context, subs)
}

func workingDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}
