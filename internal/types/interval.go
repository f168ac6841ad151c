package types

import "strconv"

// Interval output in Postgres's default IntervalStyle "postgres":
//
//	1 year 2 mons 3 days 04:05:06.789
//	-1 days +02:00:00
//	00:00:00
//
// Months print as years and months, days as days, microseconds as a clock
// with unbounded hours (24:00:00 stays 24:00:00: Postgres never folds hours
// into days on output). A part is signed "+" only when the part before it
// was negative, so the sign of each part is never ambiguous.

func appendInterval(dst []byte, v DInterval) []byte {
	w := intervalWriter{dst: dst, zero: true}
	w.part(int64(v.Months/12), "year")
	w.part(int64(v.Months%12), "mon")
	w.part(int64(v.Days), "day")
	if w.zero || v.Micros != 0 {
		if !w.zero {
			w.dst = append(w.dst, ' ')
		}
		switch {
		case v.Micros < 0:
			w.dst = append(w.dst, '-')
		case w.before:
			w.dst = append(w.dst, '+')
		}
		w.dst = appendClock(w.dst, absMicros(v.Micros))
	}
	return w.dst
}

// absMicros is |us| as uint64, which also holds |MinInt64|.
func absMicros(us int64) uint64 {
	if us < 0 {
		return uint64(-(us + 1)) + 1
	}
	return uint64(us)
}

// intervalWriter remembers whether anything was written (zero) and whether
// the last part was negative (before), as Postgres's EncodeInterval does.
type intervalWriter struct {
	dst    []byte
	zero   bool
	before bool
}

func (w *intervalWriter) part(n int64, unit string) {
	if n == 0 {
		return
	}
	if !w.zero {
		w.dst = append(w.dst, ' ')
	}
	if w.before && n > 0 {
		w.dst = append(w.dst, '+')
	}
	w.dst = strconv.AppendInt(w.dst, n, 10)
	w.dst = append(w.dst, ' ')
	w.dst = append(w.dst, unit...)
	if n != 1 {
		w.dst = append(w.dst, 's')
	}
	w.zero, w.before = false, n < 0
}
