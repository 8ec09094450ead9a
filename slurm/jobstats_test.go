package slurm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func jobstatsFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/jobstats/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The hand-checked summaries read as their README says.
func TestDecodeJobstats(t *testing.T) {
	cpu, err := DecodeJobstats(jobstatsFixture(t, "della-cpu.txt"))
	if err != nil || cpu == nil || len(cpu.GPUs) != 0 || cpu.NoData || cpu.PeakMiB() != 0 {
		t.Errorf("a CPU job: %+v, %v", cpu, err)
	}
	full, err := DecodeJobstats(jobstatsFixture(t, "a100-full.txt"))
	if err != nil || len(full.GPUs) != 1 {
		t.Fatalf("an A100: %+v, %v", full, err)
	}
	if g := full.GPUs[0]; g.Node != "della-k1g1" || g.Minor != "1" || g.UsedMiB != 79455.25 || g.TotalMiB != 81920 || g.Utilization != 98.6 {
		t.Errorf("an A100: %+v", g)
	}
	mig, err := DecodeJobstats(jobstatsFixture(t, "mig-two-slices.txt"))
	if err != nil || len(mig.GPUs) != 2 {
		t.Fatalf("two slices: %+v, %v", mig, err)
	}
	// Minors in numeric order (3 before 10); no utilization on MIG.
	if a, b := mig.GPUs[0], mig.GPUs[1]; a.Minor != "3" || b.Minor != "10" || a.UsedMiB != 3072 || b.UsedMiB != 1024 ||
		a.TotalMiB != 10240 || a.Utilization != -1 || mig.PeakMiB() != 3072 {
		t.Errorf("two slices: %+v", mig.GPUs)
	}
	for _, none := range []string{"JS1:Short", "JS1:None", " JS1:None\n"} {
		if j, err := DecodeJobstats(none); err != nil || j == nil || !j.NoData {
			t.Errorf("%q: %+v, %v", none, j, err)
		}
	}
	if j, err := DecodeJobstats(""); j != nil || err != nil {
		t.Errorf("no AdminComment: %+v, %v", j, err)
	}
}

// What is not a summary, or not one that can be read, is said, never
// decoded past the bounds: a site's own notes, broken base64, gzip or JSON,
// a field far larger than any job's, a gzip bomb.
func TestDecodeJobstatsRefuses(t *testing.T) {
	bomb := gzipped(t, bytes.Repeat([]byte{' '}, 64<<20)) // 64 MiB of blanks in about 64 kB
	for _, tc := range []struct{ name, field, want string }{
		{"a site's note", "reviewed by ops", ""},
		{"not base64", "JS1:!!!", "not base64"},
		{"not gzip", "JS1:" + base64.StdEncoding.EncodeToString([]byte("plain")), "not gzip"},
		{"not JSON", "JS1:" + base64.StdEncoding.EncodeToString(gzipped(t, []byte("{nodes"))), "jobstats summary: not JSON"},
		{"huge field", "JS1:" + strings.Repeat("A", maxJobstatsField), "refused"},
		{"memory below 0", "JS1:" + base64.StdEncoding.EncodeToString(gzipped(t, []byte(`{"nodes":{"n":{"gpu_used_memory":{"0":-1}}}}`))), "below 0"},
		{"gzip bomb", "JS1:" + base64.StdEncoding.EncodeToString(bomb), "over 8 MiB once decompressed: refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := DecodeJobstats(tc.field)
			switch {
			case tc.want == "" && !errors.Is(err, ErrNotJobstats):
				t.Errorf("%+v, %v: want ErrNotJobstats", j, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%+v, %v: want %q", j, err, tc.want)
			}
		})
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// Whatever the field holds, decoding ends, within its bounds, with a
// summary or an error.
func FuzzDecodeJobstats(f *testing.F) {
	for _, name := range []string{"della-cpu.txt", "a100-full.txt", "mig-two-slices.txt"} {
		b, err := os.ReadFile("testdata/jobstats/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("JS1:Short")
	f.Add("JS1:" + base64.StdEncoding.EncodeToString(gzipped(f, []byte(`{"gpus":1,"nodes":{"n":{"gpu_used_memory":{"0":-1e308}}}}`))))
	f.Fuzz(func(t *testing.T, field string) {
		j, err := DecodeJobstats(field)
		if err == nil && j != nil && !j.NoData {
			_ = j.PeakMiB()
		}
	})
}

// The summary's JSON reads as encoding/json reads it into jobstatsJSON:
// the same nodes and figures where it reads one, an error where it
// refuses one (a number out of range included), the keys' case apart
// (encoding/json matches "Nodes" too; jobstats writes "nodes").
func TestJobstatsJSONAsEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"gpus":1,"nodes":{"n0042":{"cpus":4,"gpu_total_memory":{"0":10200547328},"gpu_used_memory":{"0":4294967296},"gpu_utilization":{"0":55}}},"total_time":4000}`,
		`{"nodes":{"a":{"gpu_used_memory":{"3":1,"10":2}},"b":{"gpu_total_memory":{"0":5}}}}`,
		`{"nodes":{"a":null,"b":{"gpu_used_memory":null}}}`,
		`{"nodes":{"a":{"gpu_used_memory":{"0":null}}}}`,
		`{"nodes":{"a":{"gpu_used_memory":{"0":1,"0":2}}}}`,
		`{"nodes":{"a":{"gpu_used_memory":{"0":1}},"a":{"gpu_total_memory":{"0":2}}}}`,
		`{"nodes":null}`, `{}`, `null`, `{"other":[1,{"x":"y"}]}`,
		`{"nodes":{"a":{"gpu_used_memory":{"0":"1"}}}}`,
		`{"nodes":{"a":{"gpu_used_memory":[1]}}}`,
		`{"nodes":{"a":{"gpu_used_memory":{"0":1e400}}}}`,
		`{"nodes":[]}`, `{"nodes":{"a":3}}`, `[]`, `"x"`, `{"nodes":{`, ``, `{"nodes":{}} x`,
	} {
		if diff := differsFromEncodingJSON(data); diff != "" {
			t.Error(diff)
		}
	}
}

// differsFromEncodingJSON says how parseJSON's reading of data differs
// from encoding/json's into jobstatsJSON; "" where it does not.
func differsFromEncodingJSON(data string) string {
	var want jobstatsJSON
	wantErr := json.Unmarshal([]byte(data), &want)
	var d jobstatsDecoder
	got, err := d.parseJSON([]byte(data))
	switch {
	case (err != nil) != (wantErr != nil):
		return fmt.Sprintf("%q: error %v, encoding/json's %v", data, err, wantErr)
	case err == nil && !reflect.DeepEqual(got.gpus(), want.gpus()):
		return fmt.Sprintf("%q: %+v, encoding/json's %+v", data, got.gpus(), want.gpus())
	}
	return ""
}

// FuzzJobstatsJSON: whatever the JSON, parseJSON agrees with encoding/json
// (TestJobstatsJSONAsEncodingJSON's rule), but on two things no jobstats
// writes, where it is the more lenient: a key's case, and raw control
// characters inside strings.
func FuzzJobstatsJSON(f *testing.F) {
	f.Add(`{"nodes":{"a":{"gpu_used_memory":{"0":1,"10":2}}}}`)
	f.Add(`{"nodes":{"n\u0030":{"gpu_used_memory":{"\u0031":1}}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		low := strings.ToLower(data)
		for _, k := range []string{"nodes", "gpu_used_memory", "gpu_total_memory", "gpu_utilization"} {
			if strings.Count(low, k) != strings.Count(data, k) {
				t.Skip()
			}
		}
		for _, c := range []byte(data) {
			if c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				t.Skip()
			}
		}
		if diff := differsFromEncodingJSON(data); diff != "" {
			t.Fatal(diff)
		}
	})
}
