package history

import (
	"fmt"
	"time"
)

// MonthPeriod is a calendar month in local time: "2026-10", or "last" for
// the month before now's.
func MonthPeriod(month string, now time.Time) (Period, error) {
	start, err := time.ParseInLocation("2006-01", month, time.Local)
	if month == "last" {
		start, err = time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.Local), nil
	}
	if err != nil {
		return Period{}, fmt.Errorf("%q is not a month: give one as 2026-10, or last", month)
	}
	return Period{From: start, Before: start.AddDate(0, 1, 0)}, nil
}
