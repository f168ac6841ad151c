package expr

import (
	"strings"
	"testing"
	"time"
)

// TestFormatTemplate: every expected string is Postgres 15's to_char of
// the same timestamp and template.
func TestFormatTemplate(t *testing.T) {
	templates := []string{"YYYY-MM-DD", "HH:MI", "HH:mm", "HH24:MI:SS.MS", "hh24:mi:ss.us", "Day, DD Month YYYY",
		"FMDay, FMDD FMMonth YYYY", "Dy Mon DD YY AM", "dy mon a.m. P.M.", "DDD D Q YYY Y", `"Week of" YYYY "at" HH12am`,
		"MONTH DAY", "FMHH12:FMMI", "yyyy/mm/dd"}
	for _, c := range []struct {
		ts   time.Time
		want string
	}{
		{time.Date(1999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
			"1999-12-31|11:59|11:12|23:59:59.999|23:59:59.999000|Friday   , 31 December  1999|Friday, 31 December 1999|Fri Dec 31 99 PM|fri dec p.m. P.M.|365 6 4 999 9|Week of 1999 at 11pm|DECEMBER  FRIDAY   |11:59|1999/12/31"},
		{time.Date(2015, 7, 15, 0, 7, 9, 123_456_000, time.UTC),
			"2015-07-15|12:07|12:07|00:07:09.123|00:07:09.123456|Wednesday, 15 July      2015|Wednesday, 15 July 2015|Wed Jul 15 15 AM|wed jul a.m. A.M.|196 4 3 015 5|Week of 2015 at 12am|JULY      WEDNESDAY|12:7|2015/07/15"},
		{time.Date(2024, 2, 29, 13, 5, 0, 0, time.UTC),
			"2024-02-29|01:05|01:02|13:05:00.000|13:05:00.000000|Thursday , 29 February  2024|Thursday, 29 February 2024|Thu Feb 29 24 PM|thu feb p.m. P.M.|060 5 1 024 4|Week of 2024 at 01pm|FEBRUARY  THURSDAY |1:5|2024/02/29"},
	} {
		var got []string
		for _, tmpl := range templates {
			d, err := formatTemplate(c.ts, tmpl)
			if err != nil {
				t.Fatalf("%q: %v", tmpl, err)
			}
			got = append(got, d.(string))
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.ts, g, c.want)
		}
	}
}

// TestFormatTemplateRefusesOtherPatterns: a pattern Postgres would fill in
// is an error, not text; quoted, it is text.
func TestFormatTemplateRefusesOtherPatterns(t *testing.T) {
	ts := time.Date(2015, 7, 15, 0, 7, 9, 0, time.UTC)
	for _, tmpl := range []string{"IW", "YYYY-WW", "SSSS", "DDth", "J", "Week", "TZ", "CC"} {
		if _, err := formatTemplate(ts, tmpl); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%q: %v", tmpl, err)
		}
	}
	if d, err := formatTemplate(ts, `"Week" YYYY`); err != nil || d != "Week 2015" {
		t.Errorf(`"Week" YYYY = %v, %v`, d, err)
	}
}
