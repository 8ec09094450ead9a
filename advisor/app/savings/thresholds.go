package savings

import "github.com/migadvisor/migadvisor/catalog"

// ThresholdsFor are the thresholds a report applies: the site file's
// [report] with the defaults where it sets none, and a run's own
// (--min-su-saved, --min-runs) over them; nil: the site's.
func ThresholdsFor(site *catalog.Site, minSUSaved *float64, minRuns *int) catalog.Report {
	th := site.Report.WithDefaults()
	if minSUSaved != nil {
		th.MinSUSaved = *minSUSaved
	}
	if minRuns != nil {
		th.MinRuns = *minRuns
	}
	return th
}
