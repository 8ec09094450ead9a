package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor wires advisor/doctor: one line per check, the fix under a line
// that is not ok, --json, and exit 1 where a check is a problem, 0 where
// warnings alone are.
func TestDoctorCommand(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	os.WriteFile(conf, []byte("ClusterName=migdev\n"), 0o644)
	t.Setenv("SLURM_CONF", conf)

	out, errOut, code := migadvisor(t, "doctor")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "warning  site file: no site file (none at ") ||
		!strings.Contains(out, "\nwarning  submission: an sbatch from this shell gets no advice: "+conf+" names no CliFilterPlugins") ||
		!strings.HasSuffix(out, "\n0 problems, 5 warnings of 5 checks\n") {
		t.Errorf("warnings alone: exit %d, %s%s", code, out, errOut)
	}

	site := filepath.Join(dir, "site.toml")
	wulver := mustRunCLI(t, "catalog", "export", "--site", "wulver")
	wulver = strings.Replace(strings.Replace(wulver, `name = ""`, `name = "mysite"`, 1), "\n[", "\n[history]\nsite_db = \""+dir+"/shared/history.db\"\n\n[", 1)
	os.WriteFile(site, []byte(wulver), 0o644)
	t.Setenv("MIGADVISOR_SITE", site)
	out, _, code = migadvisor(t, "doctor")
	if code != exitFailure || !strings.Contains(out, "\nproblem  site history: site_db "+dir+"/shared/history.db: no such file or directory\n         fix: publish it: ") {
		t.Errorf("no published history: exit %d\n%s", code, out)
	}
	out, _, code = migadvisor(t, "doctor", "--json")
	var r struct {
		Checks []struct {
			Check, Status, Found, Fix string
		} `json:"checks"`
		Problems int `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitFailure || r.Problems < 2 || r.Checks[0].Check != "site" ||
		r.Checks[0].Status != "ok" || !strings.Contains(r.Checks[0].Found, "from "+site+", named by --site or MIGADVISOR_SITE") {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}
}
