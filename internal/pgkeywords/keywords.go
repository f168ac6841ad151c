// Package pgkeywords lists PostgreSQL 15's SQL keywords, as
// pg_get_keywords() returns them (keywords_gen.go is generated from a
// real server with gen_keywords.sql), for pg_get_keywords itself and for
// quoting identifiers as quote_ident and format('%I') do.
package pgkeywords

import (
	"strings"
	"sync"
)

// Keyword is one keyword: its category, U (unreserved), C (unreserved,
// cannot be a function or type name), T (reserved, can be a function or
// type name) or R (reserved), and whether it can be a bare column label.
type Keyword struct {
	Word      string
	Category  byte
	BareLabel bool
}

var all = sync.OnceValue(func() []Keyword {
	var out []Keyword
	for _, f := range strings.Fields(keywordList) {
		word, rest, _ := strings.Cut(f, ":")
		out = append(out, Keyword{Word: word, Category: rest[0], BareLabel: rest[1] == 'B'})
	}
	return out
})

var byWord = sync.OnceValue(func() map[string]Keyword {
	out := map[string]Keyword{}
	for _, k := range all() {
		out[k.Word] = k
	}
	return out
})

// All lists the keywords in alphabetical order.
func All() []Keyword { return all() }

// Lookup finds word (lower case).
func Lookup(word string) (Keyword, bool) {
	k, ok := byWord()[word]
	return k, ok
}

// QuoteIdent quotes name as Postgres's quote_ident does: unless it is a
// lower-case identifier that is not a keyword needing quotes.
func QuoteIdent(name string) string {
	plain := name != ""
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
			break
		}
	}
	if k, ok := Lookup(name); ok && k.Category != 'U' {
		plain = false
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
