package savings

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// CSVHeader names the columns of WriteCSV. script is where the user
// submitted it from, empty where only slurmdbd's copy is known (sacct
// --batch-script -j ID shows it; never the history's own sacct:CLUSTER/ID
// address). gpu_mem_kind says what gpu_mem_need_mib proves
// (Script.MemoryKind): allocated or peak, the need; oom, at least that;
// ceiling, at most that; empty, no figure. A row of interactive sessions
// has basis held (BasisHeld): no script, its change is in OnDemand's form
// or salloc's options.
var CSVHeader = []string{"user", "job_name", "script", "fingerprint", "jobs", "ran_on", "recommended", "request", "time_limit",
	"basis", "runs", "gpu_mem_need_mib", "measured_by", "usable_mib", "runtime_ratio", "su_spent", "su_there", "su_saved", "job_ids",
	"gpu_mem_kind"}

// WriteCSV writes the listed scripts, one row each, most SU saved first:
// for a spreadsheet, or for a site's own mail merge.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, s := range rep.Scripts {
		row := []string{s.User, cell(s.Name), cell(s.File()), s.Fingerprint, strconv.Itoa(s.Jobs), strings.Join(s.RanOn, " "), s.Recommended,
			s.Request, s.TimeLimit, s.Basis, strconv.Itoa(s.Runs), number(s.NeedMiB), s.MeasuredBy, number(s.UsableMiB),
			number(s.RuntimeRatio), number(s.SUSpent), number(s.SUThere), number(s.SUSaved), strings.Join(s.JobIDs[:min(len(s.JobIDs), MaxJobIDs)], " "),
			s.MemoryKind}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// cell keeps a value a user chose (a job name, a script's path) from being
// read as a formula by the spreadsheet the admin opens the CSV in. User
// names and requests are the site's, and stay as they are for a mail merge.
func cell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
