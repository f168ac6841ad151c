package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// likeEscape is Postgres's like_escape(pattern, escape): the parser turns
// s LIKE p ESCAPE e into s LIKE like_escape(p, e), so the pattern is
// rewritten to use the default escape, backslash. An empty escape disables
// escaping, which is backslash doubled; any escape but one character is
// 22025 (like.c's do_like_escape).
func likeEscape(_ *Context, p, e string) (string, error) {
	if e == "" {
		return strings.ReplaceAll(p, `\`, `\\`), nil
	}
	if utf8.RuneCountInString(e) != 1 {
		return "", sqlerr.New(sqlerr.Code("22025"), "invalid escape string")
	}
	esc, _ := utf8.DecodeRuneInString(e)
	if esc == '\\' {
		return p, nil
	}
	var b strings.Builder
	afterEscape := false
	for _, c := range p {
		switch {
		case c == esc && !afterEscape:
			b.WriteByte('\\')
			afterEscape = true
		case c == '\\':
			b.WriteByte('\\')
			if !afterEscape {
				b.WriteByte('\\')
			}
			afterEscape = false
		default:
			b.WriteRune(c)
			afterEscape = false
		}
	}
	return b.String(), nil
}
