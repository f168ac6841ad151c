package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// codeSubstringError is Postgres's 22011, not (yet) named in sqlerr.
const codeSubstringError = sqlerr.Code("22011")

func registerLike(r registry) {
	b := types.TBool
	r.add("like_escape", sig(tv, tv), tv, binary(likeEscape))
	for _, name := range []string{"like", "~~"} {
		r.add(name, sig(tv, tv), b, likeBuild(false, false, false))
		r.add(name, sig(tv, tv, tv), b, likeBuild(false, false, true))
	}
	for _, name := range []string{"ilike", "~~*"} {
		r.add(name, sig(tv, tv), b, likeBuild(true, false, false))
		r.add(name, sig(tv, tv, tv), b, likeBuild(true, false, true))
	}
	for _, name := range []string{"not_like", "!~~"} {
		r.add(name, sig(tv, tv), b, likeBuild(false, true, false))
		r.add(name, sig(tv, tv, tv), b, likeBuild(false, true, true))
	}
	for _, name := range []string{"not_ilike", "!~~*"} {
		r.add(name, sig(tv, tv), b, likeBuild(true, true, false))
		r.add(name, sig(tv, tv, tv), b, likeBuild(true, true, true))
	}
}

func likeBuild(fold, negate, withEscape bool) buildFn {
	return nary(true, func(_ *Context, a []types.Datum) (types.Datum, error) {
		s, p := a[0].(string), a[1].(string)
		esc := '\\'
		if withEscape {
			e := a[2].(string)
			switch utf8.RuneCountInString(e) {
			case 0:
				esc = -1 // ESCAPE '' disables escaping
			case 1:
				esc, _ = utf8.DecodeRuneInString(e)
			default:
				return nil, sqlerr.New(sqlerr.Code("22025"), "invalid escape string")
			}
		}
		if fold {
			s, p = strings.ToLower(s), strings.ToLower(p)
		}
		m, err := likeMatch([]rune(s), []rune(p), esc)
		if err != nil {
			return nil, err
		}
		return m != negate, nil
	})
}

// likeMatch matches s against a LIKE pattern: % is any run, _ any one
// character, esc quotes the next character. It backtracks only to the
// last %, so it runs in O(len(s)·len(p)) at worst.
func likeMatch(s, p []rune, esc rune) (bool, error) {
	si, pi := 0, 0
	starP, starS := -1, -1
	for si < len(s) {
		if pi < len(p) {
			c := p[pi]
			switch {
			case c == '%':
				starP, starS = pi, si
				pi++
				continue
			case c == esc:
				if pi+1 >= len(p) {
					return false, sqlerr.New(sqlerr.Code("22025"), "LIKE pattern must not end with escape character")
				}
				if p[pi+1] == s[si] {
					si, pi = si+1, pi+2
					continue
				}
			case c == '_' || c == s[si]:
				si, pi = si+1, pi+1
				continue
			}
		}
		if starP < 0 {
			return false, nil
		}
		starS++
		si, pi = starS, starP+1
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	// A trailing escape left over once s is consumed is no match, not an
	// error: Postgres's MatchText only complains about one it must use.
	return pi == len(p), nil
}
