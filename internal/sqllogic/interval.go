package sqllogic

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// interval is a parsed interval (or time of day) spelling. Months stay
// apart because their length varies; days fold into the clock part at 24h,
// the equality Postgres itself uses between '1 day' and '24:00:00' and the
// one RisingWave's DISTINCT groups by.
type interval struct {
	months int64
	micros int64
}

var clockPattern = regexp.MustCompile(`^([+-])?(\d+):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$`)

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 24 * 3600 * microsPerSecond
)

// unitSize maps the unit words of Postgres interval output (and its verbose
// style) to (months, micros) per unit. Single-letter input abbreviations
// are left out on purpose: `m` would be ambiguous.
func unitSize(word string) (months, micros int64, ok bool) {
	w := strings.ToLower(word)
	if w != "ms" && w != "us" {
		w = strings.TrimSuffix(w, "s")
	}
	switch w {
	case "year", "yr":
		return 12, 0, true
	case "mon", "month":
		return 1, 0, true
	case "week":
		return 0, 7 * microsPerDay, true
	case "day":
		return 0, microsPerDay, true
	case "hour", "hr":
		return 0, 3600 * microsPerSecond, true
	case "min", "minute":
		return 0, 60 * microsPerSecond, true
	case "sec", "second":
		return 0, microsPerSecond, true
	case "ms", "msec", "millisecond":
		return 0, 1000, true
	case "us", "usec", "microsecond":
		return 0, 1, true
	}
	return 0, 0, false
}

// parseInterval reads the postgres output style: `N unit` pairs and an
// optional signed clock part, e.g. `1 year 2 mons -3 days +04:05:06.5`.
func parseInterval(s string) (interval, bool) {
	tokens := strings.Fields(s)
	if len(tokens) == 0 {
		return interval{}, false
	}
	var iv interval
	for i := 0; i < len(tokens); i++ {
		if micros, ok := parseClock(tokens[i]); ok {
			iv.micros += micros
			continue
		}
		if i+1 >= len(tokens) {
			return interval{}, false
		}
		n, err := strconv.ParseFloat(tokens[i], 64)
		months, micros, ok := unitSize(tokens[i+1])
		if err != nil || !ok || math.IsInf(n, 0) || math.IsNaN(n) {
			return interval{}, false
		}
		if months != 0 {
			if n != math.Trunc(n) {
				return interval{}, false // fractional months: not a spelling we compare
			}
			iv.months += int64(n) * months
		} else {
			iv.micros += int64(math.Round(n * float64(micros)))
		}
		i++
	}
	return iv, true
}

// parseClock reads [+-]H:MM[:SS[.frac]] as microseconds.
func parseClock(tok string) (int64, bool) {
	m := clockPattern.FindStringSubmatch(tok)
	if m == nil {
		return 0, false
	}
	h, _ := strconv.ParseInt(m[2], 10, 64)
	mi, _ := strconv.ParseInt(m[3], 10, 64)
	sec, _ := strconv.ParseInt(m[4]+"0", 10, 64) // "" -> 0
	sec /= 10
	frac := m[5] + strings.Repeat("0", 9-len(m[5]))
	nanos, _ := strconv.ParseInt(frac, 10, 64)
	total := (h*3600+mi*60+sec)*microsPerSecond + nanos/1000
	if m[1] == "-" {
		total = -total
	}
	return total, true
}

func intervalsEqual(a, b string) bool {
	x, okA := parseInterval(a)
	y, okB := parseInterval(b)
	return okA && okB && x == y
}
