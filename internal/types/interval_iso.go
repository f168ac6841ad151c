package types

// readISO reads the part of an ISO 8601 duration after the P:
// [nY][nM][nW][nD][T[nH][nM][nS]], numbers optionally signed and
// fractional.
func (b *ivBuilder) readISO(v string) bool {
	if v == "" {
		return false
	}
	inTime := false
	for v != "" {
		if v[0] == 't' {
			if inTime || len(v) == 1 {
				return false
			}
			inTime = true
			v = v[1:]
			continue
		}
		i := 0
		for i < len(v) && (isDigit(v[i]) || v[i] == '.' || v[i] == '-' || v[i] == '+') {
			i++
		}
		if i == 0 || i == len(v) {
			return false
		}
		n, ok := parseIvNumber(v[:i])
		if !ok {
			return false
		}
		u, ok := isoUnit(v[i], inTime)
		if !ok || !b.addUnit(u, n) {
			return false
		}
		v = v[i+1:]
	}
	return true
}

// isoUnit maps an ISO 8601 designator; M is months before T and minutes
// after it.
func isoUnit(c byte, inTime bool) (ivUnit, bool) {
	name := ""
	switch {
	case !inTime && c == 'y':
		name = "year"
	case !inTime && c == 'm':
		name = "month"
	case !inTime && c == 'w':
		name = "week"
	case !inTime && c == 'd':
		name = "day"
	case inTime && c == 'h':
		name = "hour"
	case inTime && c == 'm':
		name = "minute"
	case inTime && c == 's':
		name = "second"
	}
	return ivUnitByName(name)
}
