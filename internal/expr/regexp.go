package expr

import (
	"regexp"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Postgres's regular expressions are run with Go's RE2: the common
// syntax is the same, and what RE2 lacks (back-references in a pattern,
// lookaround) is an error (2201B) rather than a different answer. As in
// Postgres, . matches a newline unless the 'n' flag asks for
// newline-sensitive matching. A constant pattern is compiled once.

func registerRegexp(r registry) {
	tv := types.TVarchar
	arr := types.ArrayOf(tv)
	r.add("regexp_match", sig(tv, tv), arr, regexpBuild(1, regexpMatch))
	r.add("regexp_match", sig(tv, tv, tv), arr, regexpBuild(1, regexpMatch))
	r.add("regexp_replace", sig(tv, tv, tv), tv, regexpBuild(1, regexpReplace))
	r.add("regexp_replace", sig(tv, tv, tv, tv), tv, regexpBuild(1, regexpReplace))
	for op, neg := range map[string]bool{"~": false, "!~": true} {
		r.add(op, sig(tv, tv), types.TBool, regexpBuild(1, regexpIs(neg)))
	}
	for op, neg := range map[string]bool{"~*": false, "!~*": true} {
		r.add(op, sig(tv, tv), types.TBool, regexpBuildFlags("i", regexpIs(neg)))
	}
}

type regexpFn func(re *regexp.Regexp, a []types.Datum) (types.Datum, error)

// regexpBuild builds a call whose argument pat is the pattern and whose
// argument 2 (regexp_match) or 3 (regexp_replace), when given, the flags.
func regexpBuild(pat int, fn regexpFn) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		flagsAt := 2
		if len(args) == 4 || (len(args) == 3 && ret.ID == types.Varchar) {
			flagsAt = 3 // regexp_replace(source, pattern, replacement[, flags])
		}
		return compiledRegexp(args, ret, pat, flagsAt, "", fn)
	}
}

// regexpBuildFlags builds an operator with fixed flags.
func regexpBuildFlags(flags string, fn regexpFn) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		return compiledRegexp(args, ret, 1, -1, flags, fn)
	}
}

func compiledRegexp(args []Expr, ret types.Type, pat, flagsAt int, fixed string, fn regexpFn) (Expr, error) {
	var re *regexp.Regexp
	if p, ok := constString(args[pat]); ok {
		flags, ok := fixed, true
		if flagsAt >= 0 && flagsAt < len(args) {
			flags, ok = constString(args[flagsAt])
		}
		if ok {
			var err error
			if re, err = compileRegexp(p, flags); err != nil {
				return nil, err
			}
		}
	}
	return &naryExpr{args: args, typ: ret, strict: true, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
		r := re
		if r == nil {
			flags := fixed
			if flagsAt >= 0 && flagsAt < len(a) {
				flags = a[flagsAt].(string)
			}
			var err error
			if r, err = compileRegexp(a[pat].(string), flags); err != nil {
				return nil, err
			}
		}
		return fn(r, a)
	}}, nil
}

func constString(e Expr) (string, bool) {
	lit, ok := e.(*literalExpr)
	if !ok {
		return "", false
	}
	s, ok := lit.val.(string)
	return s, ok
}

// compileRegexp compiles a Postgres pattern with its flags: i (case
// insensitive), c (case sensitive), n (newline-sensitive), s, g (global,
// regexp_replace only; checked by the caller's use).
func compileRegexp(pattern, flags string) (*regexp.Regexp, error) {
	fold, newline := false, false // a later flag overrides an earlier one
	for _, f := range flags {
		switch f {
		case 'i':
			fold = true
		case 'c':
			fold = false
		case 'n', 'm':
			newline = true
		case 's':
			newline = false
		case 'g':
		default:
			return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid regular expression option: %q", f)
		}
	}
	prefix := "s"
	if newline {
		prefix = "m"
	}
	if fold {
		prefix += "i"
	}
	re, err := regexp.Compile("(?" + prefix + ")" + pattern)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.Code("2201B"), "invalid regular expression: %v", err)
	}
	// Postgres prefers the longest match where RE2 takes the first
	// alternative that matches (a|ab against "abcd").
	re.Longest()
	return re, nil
}

// regexpMatch is regexp_match: the first match's capture groups (the
// whole match when there are none), NULL when nothing matches.
func regexpMatch(re *regexp.Regexp, a []types.Datum) (types.Datum, error) {
	if len(a) == 3 && strings.ContainsRune(a[2].(string), 'g') {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "regexp_match() does not support the \"global\" option")
	}
	s := a[0].(string)
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, nil
	}
	if len(m) == 2 {
		return types.DArray{s[m[0]:m[1]]}, nil
	}
	out := make(types.DArray, 0, len(m)/2-1)
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, s[m[i]:m[i+1]])
	}
	return out, nil
}

// regexpReplace is regexp_replace(source, pattern, replacement[, flags]):
// the first match replaced, or every one with the g flag. In the
// replacement \n is capture n and \& the whole match.
func regexpReplace(re *regexp.Regexp, a []types.Datum) (types.Datum, error) {
	src, repl := a[0].(string), goReplacement(a[2].(string))
	global := len(a) == 4 && strings.ContainsRune(a[3].(string), 'g')
	if global {
		return re.ReplaceAllString(src, repl), nil
	}
	loc := re.FindStringSubmatchIndex(src)
	if loc == nil {
		return src, nil
	}
	var dst []byte
	dst = re.ExpandString(dst, repl, src, loc)
	return src[:loc[0]] + string(dst) + src[loc[1]:], nil
}

// goReplacement turns a Postgres replacement into Go's template syntax.
func goReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c == '\\' && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			b.WriteString("${" + string(r[i+1]) + "}")
			i++
		case c == '\\' && i+1 < len(r) && r[i+1] == '&':
			b.WriteString("${0}")
			i++
		case c == '\\' && i+1 < len(r):
			b.WriteByte(r[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func regexpIs(negate bool) regexpFn {
	return func(re *regexp.Regexp, a []types.Datum) (types.Datum, error) {
		return re.MatchString(a[0].(string)) != negate, nil
	}
}
