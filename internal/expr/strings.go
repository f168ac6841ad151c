package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// String functions count characters (runes), not bytes, as Postgres does
// with UTF-8; comparisons elsewhere use byte order (the C collation).

var tv = types.TVarchar

func registerStrings(r registry) {
	i32, i64 := types.TInt32, types.TInt64
	r.add("||", sig(tv, tv), tv, binary(func(_ *Context, a, b string) (string, error) { return a + b, nil }))
	for _, name := range []string{"length", "char_length", "character_length"} {
		r.add(name, sig(tv), i32, unary(func(_ *Context, s string) (int64, error) { return int64(utf8.RuneCountInString(s)), nil }))
	}
	r.add("octet_length", sig(tv), i32, unary(func(_ *Context, s string) (int64, error) { return int64(len(s)), nil }))
	r.add("lower", sig(tv), tv, unary(func(_ *Context, s string) (string, error) { return strings.ToLower(s), nil }))
	r.add("upper", sig(tv), tv, unary(func(_ *Context, s string) (string, error) { return strings.ToUpper(s), nil }))
	for _, name := range []string{"substr", "substring"} {
		r.add(name, sig(tv, i64), tv, nary(true, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return substr(a[0].(string), a[1].(int64), -1, false)
		}))
		r.add(name, sig(tv, i64, i64), tv, nary(true, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return substr(a[0].(string), a[1].(int64), a[2].(int64), true)
		}))
	}
	registerTrim(r)
	r.add("replace", sig(tv, tv, tv), tv, nary(true, func(_ *Context, a []types.Datum) (types.Datum, error) {
		if a[1].(string) == "" {
			return a[0], nil
		}
		return strings.ReplaceAll(a[0].(string), a[1].(string), a[2].(string)), nil
	}))
	r.add("position", sig(tv, tv), i32, binary(func(_ *Context, s, sub string) (int64, error) {
		// position(sub IN s): Postgres's grammar turns it into
		// position(s, sub), which is what the parser passes.
		i := strings.Index(s, sub)
		if i < 0 {
			return 0, nil
		}
		return int64(utf8.RuneCountInString(s[:i])) + 1, nil
	}))
	r.add("strpos", sig(tv, tv), i32, binary(func(_ *Context, s, sub string) (int64, error) {
		i := strings.Index(s, sub)
		if i < 0 {
			return 0, nil
		}
		return int64(utf8.RuneCountInString(s[:i])) + 1, nil
	}))
	registerLike(r)
	r.add("starts_with", sig(tv, tv), types.TBool, binary(func(_ *Context, s, p string) (bool, error) { return strings.HasPrefix(s, p), nil }))
	r.addVariadic("concat", sig(anyType), tv, nary(false, concatWS("")))
	r.addVariadic("concat_ws", sig(tv, anyType), tv, nary(false, func(ctx *Context, a []types.Datum) (types.Datum, error) {
		if a[0] == nil {
			return nil, nil
		}
		return concatWS(a[0].(string))(ctx, a[1:])
	}))
	r.add("split_part", sig(tv, tv, i32), tv, nary(true, splitPart))
	r.add("left", sig(tv, i32), tv, binary(func(_ *Context, s string, n int64) (string, error) { return leftRunes(s, n), nil }))
	r.add("right", sig(tv, i32), tv, binary(func(_ *Context, s string, n int64) (string, error) { return rightRunes(s, n), nil }))
	r.add("repeat", sig(tv, i32), tv, binary(repeat))
	r.add("reverse", sig(tv), tv, unary(func(_ *Context, s string) (string, error) {
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return string(rs), nil
	}))
}

// substr is Postgres's substring(s FROM start FOR count), 1-based; a start
// before 1 eats into the count.
func substr(s string, start, count int64, hasCount bool) (types.Datum, error) {
	rs := []rune(s)
	if hasCount && count < 0 {
		return nil, sqlerr.New(codeSubstringError, "negative substring length not allowed")
	}
	from := start - 1
	to := int64(len(rs))
	if hasCount {
		if from > 0 && count > int64(len(rs)) {
			count = int64(len(rs))
		}
		to = min(to, from+count)
	}
	from = max(from, 0)
	if from >= to || from >= int64(len(rs)) {
		return "", nil
	}
	return string(rs[from:to]), nil
}

func registerTrim(r registry) {
	trims := map[string]func(string, string) string{
		"btrim": strings.Trim, "trim": strings.Trim,
		"ltrim": strings.TrimLeft, "rtrim": strings.TrimRight,
	}
	for name, f := range trims {
		r.add(name, sig(tv), tv, unary(func(_ *Context, s string) (string, error) { return f(s, " "), nil }))
		r.add(name, sig(tv, tv), tv, binary(func(_ *Context, s, chars string) (string, error) { return f(s, chars), nil }))
	}
}

func concatWS(sep string) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, a []types.Datum) (types.Datum, error) {
		var sb strings.Builder
		first := true
		for _, d := range a {
			if d == nil {
				continue // concat skips NULLs
			}
			if !first {
				sb.WriteString(sep)
			}
			first = false
			sb.WriteString(formatAny(d))
		}
		return sb.String(), nil
	}
}

// formatAny renders a datum of concat's "any" argument in text form. The
// argument's SQL type is not at hand, so int/float widths print as the
// wider type, which prints the same digits.
func formatAny(d types.Datum) string {
	switch x := d.(type) {
	case string:
		return x
	case int64:
		return types.FormatDatum(x, types.TInt64)
	case float64:
		return types.FormatDatum(x, types.TFloat64)
	}
	return types.FormatDatum(d, datumType(d))
}

// datumType returns a SQL type whose Go type is d's.
func datumType(d types.Datum) types.Type {
	for _, t := range allTypes {
		if types.CheckDatum(d, t) == nil {
			return t
		}
	}
	return types.TVarchar
}

func splitPart(_ *Context, a []types.Datum) (types.Datum, error) {
	s, delim, n := a[0].(string), a[1].(string), a[2].(int64)
	if n == 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "field position must not be zero")
	}
	var parts []string
	if delim == "" {
		parts = []string{s}
	} else {
		parts = strings.Split(s, delim)
	}
	if n < 0 {
		n = int64(len(parts)) + n + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return "", nil
	}
	return parts[n-1], nil
}

func leftRunes(s string, n int64) string {
	rs := []rune(s)
	if n < 0 {
		n = max(int64(len(rs))+n, 0)
	}
	return string(rs[:min(n, int64(len(rs)))])
}

func rightRunes(s string, n int64) string {
	rs := []rune(s)
	if n < 0 {
		n = max(int64(len(rs))+n, 0)
	}
	n = min(n, int64(len(rs)))
	return string(rs[int64(len(rs))-n:])
}

// maxRepeat bounds repeat() so one row cannot allocate without limit.
const maxRepeat = 1 << 28

func repeat(_ *Context, s string, n int64) (string, error) {
	if n <= 0 {
		return "", nil
	}
	if int64(len(s))*n > maxRepeat {
		return "", sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")
	}
	return strings.Repeat(s, int(n)), nil
}
