package slurm

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzSacctReader reads any input as a sacct dump: it never panics, reads
// a bounded number of records, and what it returns is sound: every job has
// a key, numbers are known (≥ 0) or Unknown, and skipped records name a
// line of the input.
func FuzzSacctReader(f *testing.F) {
	files, _ := filepath.Glob("../testdata/sacct/*.psv")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, seed := range []string{
		"JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName\n7|7|COMPLETED|60|gres/gpu:a100_10g=1|a|b\n7.batch|7.batch|COMPL",
		"JobID|State|JobName\n1|RUNNING|two\nlines\n2_3|FAILED|x\n",
		"JobIDRaw\x1fJobID\x1fState\x1fReqMem\x1fMaxRSS\x1fJobName\n9\x1f9\x1fTIMEOUT\x1f4Gn\x1f\x1f\n9.0\x1f9.0\x1fCANCELLED by 0\x1f\x1f2.5G\x1fstep\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewSacctReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for jobs := 0; ; jobs++ {
			if jobs > lines {
				t.Fatalf("more jobs than lines (%d)", lines)
			}
			j, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("a reader over memory failed: %v", err)
			}
			checkAcctJob(t, j, lines)
		}
		if r.Lines > lines {
			t.Errorf("read %d lines of %d", r.Lines, lines)
		}
		for _, s := range r.Skipped {
			if s.Line < 1 || s.Line > lines || s.Err == nil {
				t.Errorf("skipped record %+v outside the input's %d lines", s, lines)
			}
		}
	})
}

func checkAcctJob(t *testing.T, j *AcctJob, lines int) {
	t.Helper()
	if j.Key == "" || j.Line < 1 || j.Line > lines {
		t.Fatalf("job %+v: no key, or line outside the input", j)
	}
	for name, v := range map[string]int{"exit": j.ExitCode, "signal": j.ExitSignal, "nodes": j.Nodes, "cpus": j.CPUs, "gpus": j.GPUCount} {
		if v < Unknown {
			t.Errorf("job %s: %s %d", j.Key, name, v)
		}
	}
	for name, v := range map[string]float64{"req_mem": j.ReqMemMiB, "max_rss": j.MaxRSSMiB, "gpu_mem": j.GPUMemMiB, "gpu_util": j.GPUUtil} {
		if (v < 0 && v != Unknown) || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("job %s: %s %v", j.Key, name, v)
		}
	}
	if j.Elapsed < 0 && j.Elapsed != Unknown {
		t.Errorf("job %s: elapsed %v", j.Key, j.Elapsed)
	}
	if j.TimeLimit.Duration < 0 {
		t.Errorf("job %s: time limit %v", j.Key, j.TimeLimit.Duration)
	}
	for _, at := range []time.Time{j.Submit, j.Start, j.End} {
		if !at.IsZero() && (at.Year() < 1970 || at.Year() > 9999) {
			t.Errorf("job %s: time %v", j.Key, at)
		}
	}
}

// FuzzScanOutput scans any job output: it never panics, counts every byte,
// keeps only finite figures (a NaN or an infinity would poison the history
// and its JSON), names lines that exist, and reads a file capped at its
// head and tail without failing.
func FuzzScanOutput(f *testing.F) {
	for _, dir := range []string{"../testdata/joboutput/devcluster", "../testdata/joboutput/h200", "../testdata/nvml"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && len(data) < 64<<10 {
				f.Add(data)
			}
		}
	}
	for _, seed := range []string{
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 9.50 GiB of which 1.00 MiB is free. Including non-PyTorch memory, this process has 9.49 GiB memory in use.\n",
		"MIGADVISOR_GPU peak_mib=6754 used_peak_mib=6763 total_mib=81559 samples=78 scope=tree util=mean:0,max:15 device=NVIDIA H100 80GB HBM3\n",
		"MIGADVISOR_GPU peak_mib=6754 used_peak_mib=6763 total_mib=81559 samples=78 scope=tree util=mean:0,max:15 mem_util=mean:0,max:4 device=NVIDIA H100 80GB HBM3\n",
		"MIGADVISOR_WORK 1.5e3 samples\nMIGADVISOR_METRIC accuracy 0.98\nMIGADVISOR_VERSION torch 2.5.1\n",
		"slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-11-01T10:00:00 DUE TO TIME LIMIT ***\n",
		"slurmstepd: error: Detected 1 oom_kill event in StepId=5.batch. Some of the step tasks have been OOM Killed.\n",
		"Performance:       12.96        1.85\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ScanOutput(bytes.NewReader(data), ScanOptions{})
		if err != nil {
			t.Fatalf("scan over memory failed: %v", err)
		}
		if ev.Bytes != int64(len(data)) {
			t.Errorf("counted %d bytes of %d", ev.Bytes, len(data))
		}
		checkEvidence(t, ev, bytes.Count(data, []byte{'\n'})+1)
		path := filepath.Join(t.TempDir(), "slurm-1.out")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		capped, err := ScanFile(path, ScanOptions{MaxBytes: 64})
		if err != nil {
			t.Fatalf("capped scan: %v", err)
		}
		if capped.Truncated != (len(data) > 64) {
			t.Errorf("%d bytes read with a 64-byte cap: truncated %v", len(data), capped.Truncated)
		}
		checkEvidence(t, capped, bytes.Count(data, []byte{'\n'})+1)
	})
}

func checkEvidence(t *testing.T, ev *OutputEvidence, lines int) {
	t.Helper()
	figures := map[string]float64{"work": ev.Work, "gpu_peak": ev.GPUPeakMiB, "gpu_used_peak": ev.GPUUsedPeakMiB,
		"gpu_total": ev.GPUTotalMiB, "util_mean": ev.GPUUtilMean, "util_max": ev.GPUUtilMax,
		"mem_util_mean": ev.GPUMemUtilMean, "mem_util_max": ev.GPUMemUtilMax}
	for _, oom := range []*OOMEvent{ev.GPUOOM, ev.HostOOM} {
		if oom == nil {
			continue
		}
		figures["oom_need"] = oom.NeedMiB
		if oom.Line < 0 || oom.Line > lines {
			t.Errorf("OOM on line %d of %d", oom.Line, lines)
		}
		if len(oom.Text) > 240+len("…") {
			t.Errorf("OOM text of %d bytes", len(oom.Text))
		}
	}
	for name, v := range ev.Metrics {
		figures["metric "+name] = v
	}
	for name, v := range figures {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s is %v", name, v)
		}
	}
	if ev.GPUSamples < 0 {
		t.Errorf("%d samples", ev.GPUSamples)
	}
	if len(ev.Versions) > maxVersions {
		t.Errorf("%d versions kept", len(ev.Versions))
	}
}
