package types

import "testing"

// TestParseIntervalFields: each case's result is what Postgres 15 prints
// for the same literal (INTERVAL 'in' <fields>).
func TestParseIntervalFields(t *testing.T) {
	const (
		dayToHour   = IntervalDay | IntervalHour
		hourToMin   = IntervalHour | IntervalMinute
		minToSec    = IntervalMinute | IntervalSecond
		dayToSecond = IntervalDay | IntervalHour | IntervalMinute | IntervalSecond
	)
	for _, c := range []struct {
		in     string
		fields int32
		want   string
	}{
		{"1", IntervalMinute, "00:01:00"},
		{"2", IntervalHour, "02:00:00"},
		{"10", IntervalSecond, "00:00:10"},
		{"1.5", IntervalMinute, "00:01:00"},
		{"-1.5", IntervalHour, "-01:00:00"},
		{"14", IntervalMonth, "1 year 2 mons"},
		{"3 years 5 months", IntervalYear, "3 years"},
		{"1-2", IntervalYear | IntervalMonth, "1 year 2 mons"},
		{"1 day 02:03:04", hourToMin, "1 day 02:03:00"},
		{"1:30", minToSec, "00:01:30"},
		{"-1:30", minToSec, "-00:01:30"},
		{"1:30", hourToMin, "01:30:00"},
		{"3", dayToSecond, "00:00:03"},
		{"1 2", dayToHour, "1 day 02:00:00"},
		{"-1 2", dayToHour, "-1 days +02:00:00"},
		{"1.5 2", dayToHour, "1 day 14:00:00"},
		{"1 2:03:04", dayToSecond, "1 day 02:03:04"},
		{"1 day 2 hours", IntervalDay, "1 day"},
		{"7", 0, "00:00:07"},
		{"2 hours 30", IntervalMinute, "02:30:00"},
		{"1 day 5", IntervalHour, "1 day 05:00:00"},
		{"1 mon 2", IntervalDay, "1 mon 2 days"},
		{"1 year 6", IntervalMonth, "1 year 6 mons"},
	} {
		d, err := ParseIntervalFields(c.in, c.fields)
		if err != nil {
			t.Errorf("%q under %#x: %v", c.in, c.fields, err)
			continue
		}
		if got := FormatDatum(d, TInterval); got != c.want {
			t.Errorf("%q under %#x = %q, want %q", c.in, c.fields, got, c.want)
		}
	}
	for _, bad := range []struct {
		in     string
		fields int32
	}{{"abc", IntervalMinute}, {"1 2", dayToSecond}, {"1 2", IntervalDay | IntervalHour | IntervalMinute},
		{"300000000", IntervalYear}, {"2562047789", IntervalHour}} {
		if _, err := ParseIntervalFields(bad.in, bad.fields); err == nil {
			t.Errorf("%q under %#x parsed; Postgres refuses it", bad.in, bad.fields)
		}
	}
}

func TestIntervalModifier(t *testing.T) {
	m, err := NewIntervalModifier(IntervalSecond, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.TypeString(TInterval); got != "interval second(2)" {
		t.Errorf("TypeString %q", got)
	}
	d, err := m.Apply(DInterval{Days: 1, Micros: 1_256_000}, TInterval, true)
	if err != nil || FormatDatum(d, TInterval) != "1 day 00:00:01.26" {
		t.Errorf("Apply = %v, %v", d, err)
	}
	if _, err := NewIntervalModifier(IntervalSecond|IntervalYear, 0, false); err == nil {
		t.Error("a mask no qualifier makes was accepted")
	}
	if full, _ := NewIntervalModifier(IntervalFullRange, 3, true); full.TypeString(TInterval) != "interval(3)" {
		t.Errorf("interval(3) prints %q", full.TypeString(TInterval))
	}
}
