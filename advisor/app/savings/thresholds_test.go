package savings

import (
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
)

// A run's thresholds override the site file's, which fill the defaults'
// gaps; a zero given on the command line is a zero, not "unset".
func TestThresholdsFor(t *testing.T) {
	site := &catalog.Site{Report: catalog.Report{MinRuns: 5}}
	if th := ThresholdsFor(site, nil, nil); th.MinRuns != 5 || th.MinSUSaved != catalog.ReportDefaults.MinSUSaved {
		t.Errorf("the site's with the defaults: %+v", th)
	}
	zero, one := 0.0, 1
	if th := ThresholdsFor(site, &zero, &one); th.MinSUSaved != 0 || th.MinRuns != 1 {
		t.Errorf("the run's: %+v", th)
	}
}
