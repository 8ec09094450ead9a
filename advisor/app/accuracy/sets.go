package accuracy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
)

// CompareTables scores the model on the times measured at site (Compare):
// a set per table file, named by its base name, or with none the site's
// reference benchmarks. leftOut is told each table left out, where no job
// was measured on two profiles or more. With no set to score, an error.
func CompareTables(site *catalog.Site, tables []string, leftOut func(table string)) ([]Row, error) {
	var rows []Row
	if len(tables) == 0 {
		cases := ReferenceCases(site)
		if len(cases) == 0 {
			return nil, fmt.Errorf("site %s has no built-in reference benchmarks measured on its GPUs: give TABLE.csv files of times measured there",
				site.Name)
		}
		rows = Compare(site.Name+" workloads", site, cases)
	}
	for _, file := range tables {
		cases, err := readTable(file, site)
		if err != nil {
			return nil, err
		}
		if len(cases) == 0 {
			leftOut(file)
			continue
		}
		rows = append(rows, Compare(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), site, cases)...)
	}
	if len(rows) == 0 {
		return nil, errors.New("no table has a job measured on two profiles or more: " +
			"the model is scored on a profile's time predicted from another's")
	}
	return rows, nil
}

// readTable reads one table file's cases (ReadCases).
func readTable(file string, site *catalog.Site) ([]Case, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCases(file, f, site)
}
