package sitereplay

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// Files are where a written month lies.
type Files struct {
	Dump    string // sacct --parsable2, migadvisor's fields
	Outputs string // the jobs' output files, slurm-<id>.out
	Truth   string // the jobs as JSON, truth and evidence
	// Scripts is `sacct --batch-script` of every job, where the month's
	// site stores scripts (Options.ScriptsFrom); "": none.
	Scripts string
}

// Write writes the month's evidence and its truth under dir.
func (m *Month) Write(dir string) (Files, error) {
	f := Files{Dump: filepath.Join(dir, "sacct.psv"), Outputs: filepath.Join(dir, "outputs"), Truth: filepath.Join(dir, "truth.json")}
	if err := os.MkdirAll(f.Outputs, 0o755); err != nil {
		return f, err
	}
	var dump bytes.Buffer
	dump.WriteString(strings.Join(slurm.SacctFields, "|") + "\n")
	for _, j := range m.Jobs {
		writeRecords(&dump, j)
		if j.Output == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(f.Outputs, fmt.Sprintf("slurm-%d.out", j.ID)), []byte(j.Output), 0o644); err != nil {
			return f, err
		}
	}
	if err := os.WriteFile(f.Dump, dump.Bytes(), 0o644); err != nil {
		return f, err
	}
	if from := m.Options.ScriptsFrom; !from.IsZero() {
		f.Scripts = filepath.Join(dir, "scripts.txt")
		if err := os.WriteFile(f.Scripts, m.writeScripts(from), 0o644); err != nil {
			return f, err
		}
	}
	truth, err := json.MarshalIndent(m.Jobs, "", " ")
	if err != nil {
		return f, err
	}
	return f, os.WriteFile(f.Truth, truth, 0o644)
}

// sacctTime is a time as sacct prints it: the site's local time.
func sacctTime(t time.Time) string { return t.Local().Format("2006-01-02T15:04:05") }

// writeRecords writes the job's allocation line and its batch step's, as
// sacct --parsable2 prints them for the fields collect asks for.
func writeRecords(b *bytes.Buffer, j *Job) {
	end := j.Start.Add(time.Duration(j.ElapsedS) * time.Second)
	times := []string{sacctTime(j.Submit), sacctTime(j.Start), sacctTime(end)}
	partition, tres := "general", fmt.Sprintf("billing=%d,cpu=%d,mem=%dG,node=1", j.CPUs, j.CPUs, j.MemGB)
	if j.GPUs > 0 {
		partition = "gpu"
		typ := gresType[j.ProfileIndex()]
		tres = fmt.Sprintf("billing=%d,cpu=%d,gres/gpu:%s=%d,gres/gpu=%d,mem=%dG,node=1", j.CPUs, j.CPUs, typ, j.GPUs, j.GPUs, j.MemGB)
	}
	exit := "0:0"
	if j.State == "FAILED" {
		exit = "1:0"
	}
	workdir := workDir(j)
	id := strconv.Itoa(j.ID)
	elapsed := strconv.Itoa(int(j.ElapsedS))
	row := func(fields ...string) {
		b.WriteString(strings.Join(fields, "|"))
		b.WriteByte('\n')
	}
	// JobIDRaw JobID Cluster User Account Partition QOS State ExitCode Submit Start End ElapsedRaw TimelimitRaw
	// NNodes AllocCPUS NTasks ReqMem MaxRSS AllocTRES ReqTRES TRESUsageInMax NodeList WorkDir AdminComment JobName
	row(id, id, "wulver", j.User, "prj"+j.User[:2], partition, "standard", j.State, exit, times[0], times[1], times[2], elapsed,
		strconv.Itoa(j.LimitMin), "1", strconv.Itoa(j.CPUs), "", strconv.Itoa(j.MemGB)+"G", "", tres, tres, "", "n0104", workdir,
		jobstatsComment(j), j.Name)
	rss := fmt.Sprintf("%dK", int(float64(j.MemGB)*1024*1024*0.4))
	usage := "cpu=00:10:00,energy=0,fs/disk=8309,mem=" + rss + ",pages=0,vmem=" + rss
	if j.SacctPeakGiB != nil {
		usage += fmt.Sprintf(",gres/gpumem=%dM,gres/gpuutil=%d", int(*j.SacctPeakGiB*1024), int(*j.SacctUtil))
	}
	step := strings.Fields(j.State)[0]
	if step == "TIMEOUT" {
		step = "CANCELLED"
	}
	row(id+".batch", id+".batch", "wulver", "", "prj"+j.User[:2], "", "", step, exit, times[0], times[1], times[2], elapsed,
		"", "1", strconv.Itoa(j.CPUs), "1", "", rss, tres, "", usage, "n0104", "", "", "batch")
}

// workDir is where the job's script runs: its user's, named after it.
func workDir(j *Job) string { return "/project/" + j.User + "/" + strings.ReplaceAll(j.Name, "/", "_") }

// jobstatsComment is the summary Princeton's jobstats stores in the job's
// AdminComment ("JS1:" and the gzipped JSON, base64), "" where it wrote
// none: its GPUs' peak memory and total, and their mean utilisation on a
// whole GPU (a slice reports none).
func jobstatsComment(j *Job) string {
	if j.JobstatsPeakGiB == nil {
		return ""
	}
	used, total := map[string]int64{}, map[string]int64{}
	util := map[string]float64{}
	for g := 0; g < j.GPUs; g++ {
		k := strconv.Itoa(g)
		used[k] = int64(*j.JobstatsPeakGiB * (1 << 30))
		total[k] = int64(usableGiB[j.ProfileIndex()]*(1<<30)) + 512<<20
		if j.JobstatsUtil != nil {
			util[k] = *j.JobstatsUtil
		}
	}
	node := map[string]any{"cpus": j.CPUs, "gpu_total_memory": total, "gpu_used_memory": used,
		"total_memory": int64(j.MemGB) << 30, "total_time": j.ElapsedS * 0.8, "used_memory": int64(j.MemGB) << 28}
	if len(util) > 0 {
		node["gpu_utilization"] = util
	}
	js, _ := json.Marshal(map[string]any{"gpus": j.GPUs, "nodes": map[string]any{"n0104": node}, "total_time": int(j.ElapsedS)})
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(js)
	zw.Close()
	return "JS1:" + base64.StdEncoding.EncodeToString(b.Bytes())
}

// writeOutput makes the job's output file: its software's own lines, the
// error it died of, and the monitor's line where it ran under it.
func writeOutput(j *Job, c *class, rng *rand.Rand) {
	var b strings.Builder
	c.output(&b, j, rng, j.OOM)
	if j.MonitorPeakGiB != nil {
		p := j.ProfileIndex()
		util := "unsupported"
		if j.MonitorUtil != nil {
			util = fmt.Sprintf("mean:%d,max:%d", int(*j.MonitorUtil), int(math.Min(100, *j.MonitorUtil*1.5+5)))
		}
		fmt.Fprintf(&b, "%s peak_mib=%d used_peak_mib=%d total_mib=%d samples=%d scope=tree util=%s profile=%s device=NVIDIA A100-SXM4-80GB\n",
			slurm.MonitorLinePrefix, int(*j.MonitorPeakGiB*1024), int(*j.MonitorPeakGiB*1024)+480, int(usableGiB[p]*1024)+512,
			int(j.ElapsedS*2), util, Profiles[p])
	}
	j.Output = b.String()
}
