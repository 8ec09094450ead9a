package doctor

import (
	"fmt"
	"os"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/catalog"
)

// checkNotify checks report --notify's delivery as report itself checks
// it (savings.NewDelivery): a notify_command that cannot run is a problem,
// since every notice of a real run would fail; none named, or no
// notify_contact, a warning (a site may send no notices).
func checkNotify(site *catalog.Site, now time.Time) []Check {
	configured := len(site.Report.NotifyCommand) > 0
	_, err := savings.NewDelivery(site, "", false, now)
	dry, _ := savings.NewDelivery(site, "", true, now)
	c := Check{Name: "notify"}
	switch {
	case configured && err != nil:
		c.Status, c.Found = Problem, err.Error()
		c.Fix = "install the mail command, or name one that is installed, in the site file's [report] notify_command; " +
			"'migadvisor report --month last --notify --dry-run' shows what would be sent"
	case configured:
		c.Status, c.Found = OK, fmt.Sprintf("report --notify sends through %s", site.Report.NotifyCommand[0])
	default:
		c.Status = Warning
		c.Found = fmt.Sprintf("site %s names no notify_command in its [report], so report --notify sends nothing", site.Name)
		c.Fix = "set one, such as [\"/usr/bin/mail\", \"-s\", \"{subject}\", \"{user}\"], or give report --notify-dir DIR (docs/admin/reports.md)"
	}
	checks := []Check{c}
	if site.Report.WithDefaults().NotifyContact == "" && len(dry.Unset) > 0 {
		checks = append(checks, Check{Name: "notify", Status: Warning, Found: dry.Unset[len(dry.Unset)-1],
			Fix: "set notify_contact in the site file's [report]: who users may write to"})
	}
	return checks
}

// modeOf is the permission bits of the file at path, if it is there.
func modeOf(path string) (os.FileMode, bool) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	return info.Mode().Perm(), true
}
