package types

import (
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// The four datetime input functions: each lexes with lexDateTime, checks
// field ranges and builds its value. Error messages follow Postgres's
// DateTimeParseError.

const zoneDisplacementOverflow sqlerr.Code = "22009"

func dtError(kind dtErrKind, typeName, s string) error {
	switch kind {
	case dtFieldOverflow:
		return sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	case dtZoneOverflow:
		return sqlerr.Errorf(zoneDisplacementOverflow, "time zone displacement out of range: \"%s\"", s)
	case dtNeedsClock:
		return sqlerr.Errorf(sqlerr.FeatureNotSupported,
			"%s input \"%s\" needs the current time; use now() or current_date", typeName, s)
	}
	return sqlerr.Errorf(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typeName, s)
}

func parseDate(s string) (Datum, error) {
	const name = "date"
	f, k := lexDateTime(s)
	if k != dtOK {
		return nil, dtError(k, name, s)
	}
	switch f.special {
	case "infinity":
		return DateInfinity, nil
	case "-infinity":
		return DateNegInfinity, nil
	case "epoch":
		return DDate(0), nil
	case "":
	default:
		return nil, dtError(dtBadFormat, name, s)
	}
	if !f.hasDate {
		return nil, dtError(dtBadFormat, name, s)
	}
	if _, k := f.clockMicros(); k != dtOK {
		return nil, dtError(k, name, s)
	}
	days, k := f.days()
	if k != dtOK {
		return nil, dtError(k, name, s)
	}
	if days < minDateDays || days > maxDateDays {
		return nil, sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return DDate(days), nil
}

func parseTime(s string) (Datum, error) {
	const name = "time"
	f, k := lexDateTime(s)
	if k != dtOK {
		return nil, dtError(k, name, s)
	}
	if f.special == "allballs" {
		return DTime(0), nil
	}
	if f.special != "" || !f.hasTime {
		return nil, dtError(dtBadFormat, name, s)
	}
	if f.hasDate {
		if _, k := f.days(); k != dtOK {
			return nil, dtError(k, name, s)
		}
	}
	us, k := f.clockMicros()
	if k == dtOK && us > int64(MicrosPerDayTime) {
		k = dtFieldOverflow // 23:59:60.5
	}
	if k != dtOK {
		return nil, dtError(k, name, s)
	}
	return DTime(us), nil
}

func parseTimestamp(s string) (Datum, error) {
	us, err := parseTimestampMicros(s, "timestamp", false)
	if err != nil {
		return nil, err
	}
	return DTimestamp(us), nil
}

func parseTimestamptz(s string) (Datum, error) {
	us, err := parseTimestampMicros(s, "timestamp with time zone", true)
	if err != nil {
		return nil, err
	}
	return DTimestamptz(us), nil
}

// parseTimestampMicros reads a timestamp; with zoned it shifts the wall
// clock to UTC by the written zone (none means the session's, UTC), and
// without it ignores the zone as Postgres does for timestamp.
func parseTimestampMicros(s, name string, zoned bool) (int64, error) {
	if !zoned {
		if us, ok := isoTimestampMicros(s); ok {
			return us, nil
		}
	}
	return parseTimestampLexed(s, name, zoned)
}

// parseTimestampLexed is parseTimestampMicros through the general lexer.
func parseTimestampLexed(s, name string, zoned bool) (int64, error) {
	f, k := lexDateTime(s)
	if k != dtOK {
		return 0, dtError(k, name, s)
	}
	switch f.special {
	case "infinity":
		return int64(TimestampInfinity), nil
	case "-infinity":
		return int64(TimestampNegInfinity), nil
	case "epoch": // the Unix epoch, 1970-01-01
		return -TimestampEpochDays * MicrosPerDay, nil
	case "":
	default:
		return 0, dtError(dtBadFormat, name, s)
	}
	if !f.hasDate {
		return 0, dtError(dtBadFormat, name, s)
	}
	days, k := f.days()
	if k != dtOK {
		return 0, dtError(k, name, s)
	}
	clock, k := f.clockMicros()
	if k != dtOK {
		return 0, dtError(k, name, s)
	}
	if days < minTimestampDays || days >= maxTimestampDays {
		return 0, errTimestampRange(s)
	}
	us := (days-TimestampEpochDays)*MicrosPerDay + clock
	if zoned {
		us -= f.offsetSecs(days, clock) * MicrosPerSecond
	}
	if us < MinTimestampMicros || us >= EndTimestampMicros {
		return 0, errTimestampRange(s)
	}
	return us, nil
}

func errTimestampRange(s string) error {
	return sqlerr.Errorf(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
}

// days validates the date fields and returns days since 1970-01-01.
func (f *dtFields) days() (int64, dtErrKind) {
	if (f.year == 0 && (f.bc || !f.twoDigitYear)) || f.month < 1 || f.month > 12 || f.day < 1 {
		return 0, dtFieldOverflow
	}
	y := f.year
	switch {
	case f.bc:
		y = 1 - y
	case f.twoDigitYear && y < 70:
		y += 2000 // Postgres's window for two-digit years: 1970..2069
	case f.twoDigitYear:
		y += 1900
	}
	if f.day > daysInMonth(y, f.month) {
		return 0, dtFieldOverflow
	}
	return daysFromCivil(y, f.month, f.day), dtOK
}

// clockMicros validates the time-of-day fields (applying am/pm) and
// returns microseconds since midnight; 24:00:00 and a leap second 60 are
// allowed as in Postgres.
func (f *dtFields) clockMicros() (int64, dtErrKind) {
	h := f.hour
	switch f.ampm {
	case 'a', 'p':
		if h < 1 || h > 12 {
			return 0, dtFieldOverflow
		}
		h %= 12
		if f.ampm == 'p' {
			h += 12
		}
	}
	if h > 24 || f.minute > 59 || f.sec > 60 ||
		(h == 24 && (f.minute != 0 || f.sec != 0 || f.micros != 0)) {
		return 0, dtFieldOverflow
	}
	return h*MicrosPerHour + f.minute*MicrosPerMinute + f.sec*MicrosPerSecond + f.micros, dtOK
}

// offsetSecs is the zone offset east of UTC in force at the given local
// wall clock.
func (f *dtFields) offsetSecs(days, clock int64) int64 {
	if f.loc == nil {
		return f.zoneSecs
	}
	y, m, d := civilFromDays(days)
	// time.Date, not Add, so that a wall clock in a DST gap or overlap is
	// resolved by the zone rules rather than by elapsed time.
	local := time.Date(int(y), time.Month(m), int(d), int(clock/MicrosPerHour),
		int(clock%MicrosPerHour/MicrosPerMinute), int(clock%MicrosPerMinute/MicrosPerSecond), 0, f.loc)
	_, off := local.Zone()
	return int64(off)
}
