package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func benchCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "bench",
		Usage: "run the reference benchmark suite on every profile",
		Description: `The reference workloads are a site's published benchmarks (the Wulver suite:
MNIST SimpleCNN, CIFAR-10 DeepCNN and ResNet, QLoRA fine-tuning, GROMACS) as job
templates and the programs they run, built into migadvisor. 'bench run' writes
them, sweeps each over the profiles, submits, waits and collects; 'migadvisor
docs' then writes the site's tables and pages from the results.

Examples:
   migadvisor bench list
   migadvisor bench write --out bench/ --setup 'module load Miniforge3; conda activate torch'
   migadvisor bench run --workloads pytorch_mnist_simplecnn --profiles 1g.10gb,full --synthetic
   migadvisor bench run --suite wulver --out bench/ && migadvisor docs --out docs/`,
		Subcommands: []*cli.Command{benchListCommand(), benchWriteCommand(), benchRunCommand()},
	})
}

func suiteFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "suite", Value: workloads.DefaultSuite, EnvVars: []string{"MIGADVISOR_SUITE"}, Usage: "the benchmark suite"},
		&cli.StringFlag{Name: "workloads", Usage: "comma-separated workloads of the suite (default: all)"},
	}
}

// renderFlags say how the job scripts are written; each has an env twin so
// a site sets its environment once.
func renderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "directory for the workloads (default: migadvisor-bench-SUITE-TIME)"},
		&cli.BoolFlag{Name: "synthetic", Usage: "random data of the real shapes: no download (tagged WORKLOAD@synthetic)"},
		&cli.BoolFlag{Name: "quick", Usage: "a short run of each workload, to check the setup (tagged WORKLOAD@quick)"},
		&cli.StringFlag{Name: "setup", EnvVars: []string{"MIGADVISOR_BENCH_SETUP"},
			Usage: "shell lines each job runs first (module load, conda activate, source venv/bin/activate)"},
		&cli.StringFlag{Name: "python", EnvVars: []string{"MIGADVISOR_BENCH_PYTHON"}, Value: "python3", Usage: "the Python interpreter of the PyTorch workloads"},
		&cli.StringFlag{Name: "gmx", EnvVars: []string{"MIGADVISOR_BENCH_GMX"}, Usage: "the GROMACS binary (default: gmx, else gmx_mpi, on the node's PATH)"},
		&cli.StringFlag{Name: "data", EnvVars: []string{"MIGADVISOR_BENCH_DATA"}, Usage: "directory for datasets and caches (default: OUT/data)"},
	}
}

func benchListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the suite's workloads and the software each needs",
		Description: `Examples:
   migadvisor bench list
   migadvisor bench list --json`,
		Flags: append(suiteFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			ws, suite, err := selectWorkloads(c)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"suite": suite.Name, "title": suite.Title, "workloads": ws})
			}
			t := newTable(c.App.Writer)
			fmt.Fprintln(t, "WORKLOAD\tTITLE\tNEEDS")
			for _, w := range ws {
				fmt.Fprintf(t, "%s\t%s\t%s\n", w.Name, w.Title, w.Needs)
			}
			return t.Flush()
		},
	}
}

func benchWriteCommand() *cli.Command {
	return &cli.Command{
		Name:  "write",
		Usage: "write the workloads' job scripts and programs, without submitting",
		Description: `Writes OUT/<workload>/<workload>.sh and the programs it runs, asking for the
site's whole GPU. Each script can be submitted as it is, or swept.

Examples:
   migadvisor bench write --out bench/
   migadvisor bench write --out bench/ --workloads llm-finetuning --python ~/venvs/llm/bin/python`,
		Flags: append(append(suiteFlags(), renderFlags()...), jsonFlag()),
		Action: func(c *cli.Context) error {
			site, err := loadSite(c)
			if err != nil {
				return err
			}
			ws, suite, err := selectWorkloads(c)
			if err != nil {
				return err
			}
			out := benchDir(c, suite)
			type written struct {
				Workload string `json:"workload"`
				Tag      string `json:"tag"`
				Job      string `json:"job"`
			}
			var all []written
			for _, w := range ws {
				job, tag, err := renderWorkload(c, site, w, out)
				if err != nil {
					return err
				}
				all = append(all, written{w.Name, tag, job})
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, all)
			}
			for _, w := range all {
				fmt.Fprintln(c.App.Writer, w.Job)
			}
			return nil
		},
	}
}

func benchRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "sweep the suite's workloads over the profiles: write, submit, wait, collect",
		Description: `For each workload: writes its job script (as 'bench write'), one variant per
profile (as 'sweep', under the GPU memory monitor), submits them all, tagging
each job with the workload's name (as 'track --workload' does), then waits for
them and collects their accounting and output. Runs with --synthetic or
--quick are tagged WORKLOAD@synthetic, WORKLOAD@quick, so they never mix with
the real measurements in 'migadvisor docs'.

The jobs need the software 'bench list' names on the compute nodes: --setup
gives the lines that load it (or MIGADVISOR_BENCH_SETUP).

Examples:
   migadvisor bench run
   migadvisor bench run --workloads pytorch_mnist_simplecnn,pytorch_cifar10_resnet --profiles 1g.10gb,full
   migadvisor bench run --synthetic --setup 'module load PyTorch/2.1.2-foss-2023a-CUDA-12.1.1'
   migadvisor bench run --no-wait --json   # submit, print the job ids, return`,
		Flags: append(append(append(suiteFlags(), renderFlags()...),
			&cli.StringFlag{Name: "profiles", Usage: "comma-separated profiles (default: all of the site's)"},
			&cli.BoolFlag{Name: "no-wait", Usage: "submit and return; 'migadvisor wait' and 'collect' later"},
			jsonFlag(),
		), measureFlags("")...),
		Action: runBench,
	}
}

// benchJob is one submitted variant of a workload.
type benchJob struct {
	Workload string `json:"workload"` // the tag
	Profile  string `json:"profile"`
	JobID    string `json:"job_id"`
	Script   string `json:"script"`
	State    string `json:"state,omitempty"`
}

func runBench(c *cli.Context) error {
	site, err := loadSite(c)
	if err != nil {
		return err
	}
	ws, suite, err := selectWorkloads(c)
	if err != nil {
		return err
	}
	profiles, err := probeProfiles(c, site)
	if err != nil {
		return err
	}
	out := benchDir(c, suite)
	var jobs []benchJob
	for _, w := range ws {
		submitted, err := submitWorkload(c, site, w, out, profiles)
		jobs = append(jobs, submitted...)
		if err != nil {
			printBenchJobs(c, jobs)
			return fmt.Errorf("workload %s: %w", w.Name, err)
		}
	}
	if !c.Bool("no-wait") {
		if err := waitBench(c, jobs); err != nil {
			printBenchJobs(c, jobs)
			return err
		}
	}
	if err := printBenchJobs(c, jobs); err != nil {
		return err
	}
	if isTTY(c.App.Writer) && !c.Bool("json") {
		if c.Bool("no-wait") {
			fmt.Fprintln(c.App.Writer, "\nnext: migadvisor wait && migadvisor docs --out docs/")
		} else {
			fmt.Fprintln(c.App.Writer, "\nnext: migadvisor docs --out docs/")
		}
	}
	return nil
}

// submitWorkload writes a workload, sweeps it over the profiles and submits
// the variants, tagged with the workload.
func submitWorkload(c *cli.Context, site *catalog.Site, w *workloads.Workload, out string, profiles []string) ([]benchJob, error) {
	job, tag, err := renderWorkload(c, site, w, out)
	if err != nil {
		return nil, err
	}
	script, err := slurm.ReadScript(job)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(filepath.Dir(job), "sweep")
	sw, err := writeSweep(c, bench.SweepOptions{Script: script, Site: site, Profiles: profiles, OutDir: dir, Monitor: monitorWrap(c)},
		"the workload's script should not have any; report it")
	if err != nil {
		return nil, err
	}
	subErr := submitSweep(c, dir, sw, tag)
	var jobs []benchJob
	for _, p := range sw.Profiles {
		v := sw.Variants[p]
		if v.JobID != "" {
			jobs = append(jobs, benchJob{Workload: tag, Profile: p, JobID: v.JobID, Script: filepath.Join(dir, v.File)})
			progressf(c, "bench: %s on %s submitted as job %s", tag, p, v.JobID)
		}
	}
	return jobs, subErr
}

// waitBench waits for the jobs to leave the queue and collects them.
func waitBench(c *cli.Context, jobs []benchJob) error {
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.JobID)
	}
	if err := waitQueue(c, ids); err != nil {
		return err
	}
	tracked, err := collectEnded(c, ids)
	if err != nil {
		return err
	}
	states := map[string]string{}
	for _, t := range tracked {
		states[t.JobID] = summaryState(t.Jobs)
	}
	for i := range jobs {
		jobs[i].State = states[jobs[i].JobID]
	}
	return nil
}

func printBenchJobs(c *cli.Context, jobs []benchJob) error {
	if c.Bool("json") {
		if jobs == nil {
			jobs = []benchJob{}
		}
		return writeJSON(c.App.Writer, jobs)
	}
	t := newTable(c.App.Writer)
	fmt.Fprintln(t, "WORKLOAD\tPROFILE\tJOB ID\tSTATE\tSCRIPT")
	for _, j := range jobs {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", j.Workload, j.Profile, j.JobID, orDash(j.State), j.Script)
	}
	return t.Flush()
}

func selectWorkloads(c *cli.Context) ([]*workloads.Workload, *workloads.Suite, error) {
	suite, err := workloads.LookupSuite(c.String("suite"))
	if err != nil {
		return nil, nil, usageError{"--suite: " + err.Error()}
	}
	ws, err := suite.Select(splitList(c.String("workloads")))
	if err != nil {
		return nil, nil, usageError{"--workloads: " + err.Error()}
	}
	return ws, suite, nil
}

func benchDir(c *cli.Context, suite *workloads.Suite) string {
	if out := c.String("out"); out != "" {
		return out
	}
	return fmt.Sprintf("migadvisor-bench-%s-%s", suite.Name, time.Now().Format("20060102-150405"))
}

// renderOptions are the flags' render options for a workload; without
// --data, Render puts the data beside the workloads (OUT/data).
func renderOptions(c *cli.Context, out string, w *workloads.Workload) workloads.RenderOptions {
	return workloads.RenderOptions{Dir: filepath.Join(out, w.Name), Setup: c.String("setup"), Python: c.String("python"),
		GMX: c.String("gmx"), Data: c.String("data"), Synthetic: c.Bool("synthetic"), Quick: c.Bool("quick")}
}

// renderWorkload writes a workload's job script, asking for the site's
// largest profile (a sweep rewrites the request for each profile), and
// returns it with the tag its runs get.
func renderWorkload(c *cli.Context, site *catalog.Site, w *workloads.Workload, out string) (job, tag string, err error) {
	ordered := advisor.OrderedProfiles(site)
	if len(ordered) == 0 {
		return "", "", fmt.Errorf("site %s has no GPU profiles", site.Name)
	}
	opt := renderOptions(c, out, w)
	opt.GPURequest = ordered[len(ordered)-1].Request
	job, err = w.Render(opt)
	return job, w.Tag(opt), err
}
