package sqllogic

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Kind says what a Record does.
type Kind int

// The record kinds. Include records never reach the runner: ParseFile
// replaces them by the records of the included files.
const (
	KindStatement Kind = iota
	KindQuery
	KindSystem
	KindLet
	KindSleep
	KindHalt
	KindSubtest
	KindSortMode
	KindResultMode
	KindSubstitution
	KindHashThreshold
	KindInclude
)

func (k Kind) String() string {
	names := [...]string{"statement", "query", "system", "let", "sleep", "halt", "subtest",
		"control sortmode", "control resultmode", "control substitution", "hash-threshold", "include"}
	if k >= 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// SortMode is how result rows are ordered before comparison.
type SortMode int

// SortUnset means "use the file's current control sortmode" (default nosort).
const (
	SortUnset SortMode = iota
	NoSort
	RowSort
	ValueSort
)

func parseSortMode(s string) (SortMode, bool) {
	switch s {
	case "nosort":
		return NoSort, true
	case "rowsort":
		return RowSort, true
	case "valuesort":
		return ValueSort, true
	}
	return SortUnset, false
}

// Location is where a record starts; Upper is the include record that pulled
// the file in, so a failure deep in an include can be traced to the top file.
type Location struct {
	File  string
	Line  int
	Upper *Location
}

func (l Location) String() string {
	s := fmt.Sprintf("%s:%d", l.File, l.Line)
	if l.Upper != nil {
		s += " (included at " + l.Upper.String() + ")"
	}
	return s
}

// Condition is a skipif/onlyif line attached to the next record.
type Condition struct {
	OnlyIf bool // false: skipif
	Label  string
}

// skips reports whether the condition excludes the record under labels.
func (c Condition) skips(labels map[string]bool) bool {
	if c.OnlyIf {
		return !labels[c.Label]
	}
	return labels[c.Label]
}

// ErrorKind tells how an expected error is matched.
type ErrorKind int

// The expected-error forms.
const (
	// ErrAny: bare `error`; any failure matches.
	ErrAny ErrorKind = iota
	// ErrRegex: `error <regex>`, found anywhere in the error text.
	ErrRegex
	// ErrSQLState: `error (XX000)`, compared with the SQLSTATE.
	ErrSQLState
	// ErrText: the multi-line form under `----`. It holds another
	// engine's own message, so any error matches (see DIALECT.md).
	ErrText
)

// ExpectedError is what a `statement error` / `query error` record wants.
type ExpectedError struct {
	Kind     ErrorKind
	Regex    *regexp.Regexp
	SQLState string
	Text     string
}

func (e *ExpectedError) String() string {
	switch e.Kind {
	case ErrRegex:
		return "error matching " + e.Regex.String()
	case ErrSQLState:
		return "error with SQLSTATE " + e.SQLState
	case ErrText:
		return "error (expected text: " + firstLine(e.Text) + ")"
	}
	return "any error"
}

// matches reports whether an actual failure satisfies the expectation.
func (e *ExpectedError) matches(text, sqlState string) bool {
	switch e.Kind {
	case ErrRegex:
		return e.Regex.MatchString(text)
	case ErrSQLState:
		return strings.EqualFold(e.SQLState, sqlState)
	}
	return true
}

var sqlStateToken = regexp.MustCompile(`^\(([0-9A-Za-z]{5})\)$`)

// newExpectedError builds the inline form from the tokens after `error`.
func newExpectedError(tokens []string) (*ExpectedError, error) {
	if len(tokens) == 0 {
		return &ExpectedError{Kind: ErrAny}, nil
	}
	if len(tokens) == 1 {
		if m := sqlStateToken.FindStringSubmatch(tokens[0]); m != nil {
			return &ExpectedError{Kind: ErrSQLState, SQLState: strings.ToUpper(m[1])}, nil
		}
	}
	// sqllogictest-rs joins the tokens with single spaces, so runs of
	// spaces in the regex collapse; we do the same.
	src := strings.Join(tokens, " ")
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid error regex %q: %w", src, err)
	}
	return &ExpectedError{Kind: ErrRegex, Regex: re}, nil
}

// Retry re-runs a record until it passes: Attempts extra tries, Backoff apart.
type Retry struct {
	Attempts int
	Backoff  time.Duration
}

// Record is one directive of a test file.
type Record struct {
	Kind       Kind
	Loc        Location
	Conditions []Condition
	// Conn is the named session the record runs on; "" is the default one.
	Conn string
	// SQL is the statement, query, shell command (system) or let query.
	SQL string

	// Err is non-nil when the statement or query must fail.
	Err *ExpectedError
	// Count is the affected-row count for `statement count N` (HasCount).
	Count    int64
	HasCount bool

	// Query fields.
	Types    string
	Sort     SortMode
	Label    string
	Expected []string // expected lines (query rows; system stdout)
	HasRows  bool     // a `----` section was present
	Retry    Retry

	// Vars are the names bound by `let`.
	Vars []string
	// Arg carries the argument of sleep/subtest/control/include records:
	// the duration text, subtest name, mode, on/off, or include pattern.
	Arg       string
	Duration  time.Duration
	Threshold int
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
