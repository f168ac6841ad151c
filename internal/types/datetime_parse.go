package types

import (
	"strings"
	"time"
)

// Parsing of date, time, timestamp and timestamptz input. One lexer reads
// any of them into dtFields, the way Postgres's ParseDateTime and
// DecodeDateTime serve all four types; each type then takes the fields it
// needs (a date ignores a time of day, a timestamp ignores a zone), as
// Postgres does.
//
// Accepted: ISO dates (2024-02-29, 20240229), an optional BC/AD, a time of
// day (13:05, 13:05:07, 13:05:07.123456789 rounded to microseconds, 24:00,
// am/pm), a space or T between date and time, and a zone (Z, UTC, GMT,
// +05, +05:30, -0800, +053015, or an IANA name such as Europe/Paris).
// The words infinity, -infinity, epoch and allballs stand alone.

// dtFields are the parts of a datetime literal, as written.
type dtFields struct {
	hasDate, hasTime, hasZone, bc bool
	twoDigitYear                  bool  // 99-01-08 means 1999, as in Postgres
	year, month, day              int64 // year as written, 1 or more
	hour, minute, sec             int64
	micros                        int64 // fraction of a second, rounded; may be 1e6
	ampm                          byte  // 'a', 'p' or 0
	zoneSecs                      int64 // offset east of UTC
	loc                           *time.Location
	special                       string
}

// dtErrKind says which Postgres error a malformed datetime gets.
type dtErrKind uint8

const (
	dtOK            dtErrKind = iota
	dtBadFormat               // 22007 invalid input syntax
	dtFieldOverflow           // 22008 field value out of range
	dtZoneOverflow            // 22009 time zone displacement out of range
	dtNeedsClock              // now, today: needs the statement's clock
)

// maxZoneSecs is Postgres's TZDISP_LIMIT: 15:59:59.
const maxZoneSecs = 15*3600 + 59*60 + 59

// lexDateTime splits s into fields; it validates syntax but not ranges.
func lexDateTime(s string) (dtFields, dtErrKind) {
	if f, ok := lexISO(s); ok {
		return f, dtOK
	}
	return lexDateTimeAny(s)
}

// lexISO reads the one spelling bulk data nearly always uses, what Sluice
// and Postgres print, "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" (or T between), into
// the fields lexDateTimeAny would give it; ok is false for anything else.
// The general lexer cost a COPY of timestamps half a microsecond a value.
func lexISO(s string) (f dtFields, ok bool) {
	n := len(s)
	if n != 10 && (n < 19 || n == 20 || n > 26) {
		return f, false
	}
	digits := func(i, w int) (int64, bool) {
		var v int64
		for _, c := range []byte(s[i : i+w]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	var oks [6]bool
	f.year, oks[0] = digits(0, 4)
	f.month, oks[1] = digits(5, 2)
	f.day, oks[2] = digits(8, 2)
	if !oks[0] || !oks[1] || !oks[2] || s[4] != '-' || s[7] != '-' {
		return f, false
	}
	f.hasDate = true
	if n == 10 {
		return f, true
	}
	f.hour, oks[3] = digits(11, 2)
	f.minute, oks[4] = digits(14, 2)
	f.sec, oks[5] = digits(17, 2)
	if !oks[3] || !oks[4] || !oks[5] || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return f, false
	}
	f.hasTime = true
	if n > 19 {
		if s[19] != '.' {
			return f, false
		}
		frac, ok := digits(20, n-20)
		if !ok {
			return f, false
		}
		for range 26 - n {
			frac *= 10
		}
		f.micros = frac
	}
	return f, true
}

// lexDateTimeAny is lexDateTime for every accepted spelling.
func lexDateTimeAny(s string) (dtFields, dtErrKind) {
	var f dtFields
	orig := trimSpace(s)
	low := splitISOT(asciiLower(orig))
	toks := fieldSpans(low)
	if len(toks) == 0 {
		return f, dtBadFormat
	}
	if len(toks) == 1 {
		if sp, kind := specialWord(low); kind != dtBadFormat {
			f.special = sp
			return f, kind
		}
	}
	for _, span := range toks {
		tok := low[span[0]:span[1]]
		if k := f.addToken(tok, orig[span[0]:span[1]]); k != dtOK {
			return f, k
		}
	}
	if f.ampm != 0 && !f.hasTime {
		return f, dtBadFormat
	}
	return f, dtOK
}

// specialWord recognizes the reserved datetime words.
func specialWord(w string) (string, dtErrKind) {
	switch w {
	case "infinity", "+infinity", "-infinity", "epoch", "allballs":
		return strings.TrimPrefix(w, "+"), dtOK
	case "now", "today", "tomorrow", "yesterday":
		return w, dtNeedsClock
	}
	return "", dtBadFormat
}

// addToken consumes one whitespace-separated token.
func (f *dtFields) addToken(tok, origTok string) dtErrKind {
	switch {
	case tok == "bc":
		f.bc = true
		return dtOK
	case tok == "ad":
		return dtOK
	case tok == "am" || tok == "pm":
		if f.ampm != 0 {
			return dtBadFormat
		}
		f.ampm = tok[0]
		return dtOK
	case isDigit(tok[0]) && strings.IndexByte(tok, ':') >= 0:
		return f.addTime(tok)
	case isDigit(tok[0]) && strings.IndexByte(tok, '-') > 0:
		return f.addDate(tok)
	case isDigit(tok[0]) && allDigits(tok):
		return f.addDigits(tok)
	}
	return f.addZone(tok, origTok)
}

// addDate reads Y-M-D.
func (f *dtFields) addDate(tok string) dtErrKind {
	parts := strings.Split(tok, "-")
	if f.hasDate || len(parts) != 3 || !allDigits(parts[0]) || len(parts[1]) > 2 ||
		len(parts[2]) > 2 || !allDigits(parts[1]) || !allDigits(parts[2]) ||
		parts[1] == "" || parts[2] == "" {
		return dtBadFormat
	}
	if len(parts[0]) > 9 {
		return dtFieldOverflow
	}
	f.hasDate, f.twoDigitYear = true, len(parts[0]) <= 2
	f.year, f.month, f.day = int64(atoiDigits(parts[0])), int64(atoiDigits(parts[1])), int64(atoiDigits(parts[2]))
	return dtOK
}

// addDigits reads an undelimited YYYYMMDD date or, after a date, HHMMSS.
func (f *dtFields) addDigits(tok string) dtErrKind {
	switch {
	case len(tok) == 8 && !f.hasDate:
		f.hasDate = true
		f.year, f.month, f.day = int64(atoiDigits(tok[:4])), int64(atoiDigits(tok[4:6])), int64(atoiDigits(tok[6:]))
		return dtOK
	case len(tok) == 6 && f.hasDate && !f.hasTime:
		f.hasTime = true
		f.hour, f.minute, f.sec = int64(atoiDigits(tok[:2])), int64(atoiDigits(tok[2:4])), int64(atoiDigits(tok[4:]))
		return dtOK
	}
	return dtBadFormat
}

// addTime reads H:MM[:SS[.frac]] and a zone glued to its end (12:00Z,
// 12:00:00+05:30, 12:00pm).
func (f *dtFields) addTime(tok string) dtErrKind {
	end := 0
	for end < len(tok) && (isDigit(tok[end]) || tok[end] == ':' || tok[end] == '.') {
		end++
	}
	clock, rest := tok[:end], tok[end:]
	if f.hasTime {
		return dtBadFormat
	}
	if k := f.setClock(clock); k != dtOK {
		return k
	}
	if rest == "" {
		return dtOK
	}
	if rest == "am" || rest == "pm" {
		return f.addToken(rest, rest)
	}
	return f.addZone(rest, rest)
}

func (f *dtFields) setClock(clock string) dtErrKind {
	frac := ""
	if i := strings.IndexByte(clock, '.'); i >= 0 {
		clock, frac = clock[:i], clock[i+1:]
		if frac == "" || !allDigits(frac) {
			return dtBadFormat
		}
	}
	parts := strings.Split(clock, ":")
	if len(parts) < 2 || len(parts) > 3 || (frac != "" && len(parts) != 3) {
		return dtBadFormat
	}
	for i, p := range parts {
		if p == "" || len(p) > 2 || (i > 0 && len(p) != 2) {
			return dtBadFormat
		}
	}
	f.hasTime = true
	f.hour, f.minute = int64(atoiDigits(parts[0])), int64(atoiDigits(parts[1]))
	if len(parts) == 3 {
		f.sec = int64(atoiDigits(parts[2]))
	}
	f.micros = fractionMicros(frac)
	return dtOK
}

// fractionMicros turns the digits after a decimal point into microseconds,
// rounding half up at the seventh digit.
func fractionMicros(frac string) int64 {
	var us int64
	for i := 0; i < 6; i++ {
		us *= 10
		if i < len(frac) {
			us += int64(frac[i] - '0')
		}
	}
	if len(frac) > 6 && frac[6] >= '5' {
		us++
	}
	return us
}

// addZone reads a numeric offset, a UTC synonym or an IANA zone name.
func (f *dtFields) addZone(tok, origTok string) dtErrKind {
	if f.hasZone {
		return dtBadFormat
	}
	f.hasZone = true
	switch tok {
	case "z", "zulu", "utc", "gmt", "ut":
		return dtOK
	}
	if tok[0] == '+' || tok[0] == '-' {
		return f.setOffset(tok)
	}
	if strings.IndexByte(tok, '/') < 0 || strings.Contains(tok, "..") {
		return dtBadFormat
	}
	loc, err := time.LoadLocation(origTok)
	if err != nil {
		return dtBadFormat
	}
	f.loc = loc
	return dtOK
}

// setOffset reads ±H, ±HH, ±HHMM, ±HHMMSS, ±H:MM or ±H:MM:SS.
func (f *dtFields) setOffset(tok string) dtErrKind {
	sign := int64(1)
	if tok[0] == '-' {
		sign = -1
	}
	body := tok[1:]
	var h, m, s string
	if strings.IndexByte(body, ':') >= 0 {
		parts := strings.Split(body, ":")
		if len(parts) > 3 || len(parts[0]) > 2 {
			return dtBadFormat
		}
		h, m = parts[0], parts[1]
		if len(parts) == 3 {
			s = parts[2]
		}
		if len(m) != 2 || (len(parts) == 3 && len(s) != 2) {
			return dtBadFormat
		}
	} else {
		switch len(body) {
		case 1, 2:
			h = body
		case 4:
			h, m = body[:2], body[2:]
		case 6:
			h, m, s = body[:2], body[2:4], body[4:]
		default:
			return dtBadFormat
		}
	}
	if h == "" || !allDigits(h) || !allDigits(m) || !allDigits(s) {
		return dtBadFormat
	}
	mins, secs := int64(atoiDigits(m)), int64(atoiDigits(s))
	if mins > 59 || secs > 59 {
		return dtFieldOverflow
	}
	off := int64(atoiDigits(h))*3600 + mins*60 + secs
	if off > maxZoneSecs {
		return dtZoneOverflow
	}
	f.zoneSecs = sign * off
	return dtOK
}

// splitISOT turns the T between an ISO date and time into a space.
func splitISOT(s string) string {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == 't' && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return s[:i] + " " + splitISOT(s[i+1:])
		}
	}
	return s
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid
// for slicing the original string.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// fieldSpans returns the [start, end) offsets of whitespace-separated
// tokens, so the same spans slice the original and the lowered string.
func fieldSpans(s string) [][2]int {
	var spans [][2]int
	start := -1
	for i := 0; i <= len(s); i++ {
		space := i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f'
		switch {
		case space && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	return spans
}
