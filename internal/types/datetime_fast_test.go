package types

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestISOTimestampMatchesLexer: whenever the canonical-shape reader takes
// a string, the general lexer reads it as the same timestamp; and it takes
// every canonical string of a real date and time. Strings are drawn near
// the shape's edges (year 0, month 13, day 31 of short months, leap days,
// hour 24, second 60, up to seven fraction digits) and then possibly
// mangled at one byte.
func TestISOTimestampMatchesLexer(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		y := rapid.IntRange(0, 9999).Draw(rt, "year")
		m := rapid.IntRange(0, 13).Draw(rt, "month")
		d := rapid.IntRange(0, 32).Draw(rt, "day")
		h := rapid.IntRange(0, 25).Draw(rt, "hour")
		mi := rapid.IntRange(0, 60).Draw(rt, "minute")
		sec := rapid.IntRange(0, 61).Draw(rt, "second")
		s := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, m, d, h, mi, sec)
		if digits := rapid.IntRange(0, 7).Draw(rt, "fraction digits"); digits > 0 {
			s += "." + rapid.StringMatching(fmt.Sprintf("[0-9]{%d}", digits)).Draw(rt, "fraction")
		}
		real := y > 0 && m >= 1 && m <= 12 && d >= 1 && int64(d) <= daysInMonth(int64(y), int64(m)) &&
			h < 24 && mi < 60 && sec < 60 && len(s) <= 26
		if rapid.Bool().Draw(rt, "mangle") {
			b := []byte(s)
			b[rapid.IntRange(0, len(b)-1).Draw(rt, "at")] = rapid.SampledFrom([]byte("0x-: .T+9")).Draw(rt, "byte")
			s, real = string(b), false
		}
		fast, ok := isoTimestampMicros(s)
		if real && !ok {
			rt.Fatalf("%q: not read by the canonical reader", s)
		}
		if !ok {
			return
		}
		lexed, err := parseTimestampLexed(s, "timestamp", false)
		if err != nil || lexed != fast {
			rt.Fatalf("%q: canonical reader %d, lexer %d (%v)", s, fast, lexed, err)
		}
	})
}
