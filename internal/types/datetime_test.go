package types

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/testenv"
)

func TestCivilDaysAgreeWithTimePackage(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		days := rapid.Int64Range(minDateDays, maxDateDays).Draw(rt, "days")
		y, m, d := civilFromDays(days)
		want := time.Unix(days*86400, 0).UTC()
		if int(y) != want.Year() || time.Month(m) != want.Month() || int(d) != want.Day() {
			rt.Fatalf("day %d: civil %d-%d-%d, time package %v", days, y, m, d, want)
		}
		if back := daysFromCivil(y, m, d); back != days {
			rt.Fatalf("day %d -> %d-%d-%d -> %d", days, y, m, d, back)
		}
	})
}

func TestTimeHelpers(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		testenv.Missing(t, "the time zone database", "apt-get install -y tzdata: "+err.Error())
	}
	at := time.Date(2024, 2, 29, 13, 5, 7, 123456789, paris)
	if got := FormatDatum(TimestamptzFromTime(at), TTimestamptz); got != "2024-02-29 12:05:07.123456+00" {
		t.Errorf("TimestamptzFromTime: %s", got)
	}
	if got := FormatDatum(TimestampFromTime(at), TTimestamp); got != "2024-02-29 13:05:07.123456" {
		t.Errorf("TimestampFromTime: %s", got)
	}
	if got := FormatDatum(DateFromTime(at), TDate); got != "2024-02-29" {
		t.Errorf("DateFromTime: %s", got)
	}
	if got := FormatDatum(DTimeOf(at), TTime); got != "13:05:07.123456" {
		t.Errorf("DTimeOf: %s", got)
	}
	if got := TimestamptzFromTime(at).Time(); !got.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("Timestamptz.Time: %v", got)
	}
	if got := DDate(0).Time(); !got.Equal(time.Unix(0, 0)) {
		t.Errorf("DDate.Time: %v", got)
	}
	// Calendar arithmetic through time.Time: one month after Jan 31.
	d, _ := DateFromYMD(2024, 1, 31)
	if got := FormatDatum(DateFromTime(d.Time().AddDate(0, 1, 0)), TDate); got != "2024-03-02" {
		t.Errorf("AddDate: %s", got)
	}
	for _, far := range []DTimestamp{DTimestamp(EndTimestampMicros - 1), DTimestamp(MinTimestampMicros)} {
		if got := TimestampFromTime(far.Time()); got != far {
			t.Errorf("far timestamp round trip: %d != %d", got, far)
		}
	}
	// Timestamps count from 2000-01-01, Postgres's epoch.
	if got := FormatDatum(DTimestamp(0), TTimestamp); got != "2000-01-01 00:00:00" {
		t.Errorf("timestamp 0 is %s", got)
	}
	if _, ok := DateFromYMD(2023, 2, 29); ok {
		t.Error("DateFromYMD accepted 2023-02-29")
	}
}

func TestNamedZoneInput(t *testing.T) {
	if _, err := time.LoadLocation("America/New_York"); err != nil {
		testenv.Missing(t, "the time zone database", "apt-get install -y tzdata: "+err.Error())
	}
	for in, want := range map[string]string{
		"2024-07-01 12:00 America/New_York": "2024-07-01 16:00:00+00", // EDT
		"2024-01-01 12:00 America/New_York": "2024-01-01 17:00:00+00", // EST
	} {
		d, err := ParseDatum(in, TTimestamptz)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := FormatDatum(d, TTimestamptz); got != want {
			t.Errorf("%q: got %s want %s", in, got, want)
		}
	}
}
