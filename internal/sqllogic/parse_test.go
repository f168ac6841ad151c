package sqllogic

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordAt finds the record whose header is on line n of file.
func recordAt(t *testing.T, recs []Record, file string, n int) Record {
	t.Helper()
	for _, r := range recs {
		if filepath.Base(r.Loc.File) == file && r.Loc.Line == n {
			return r
		}
	}
	t.Fatalf("no record at %s:%d", file, n)
	return Record{}
}

func TestParseEveryKind(t *testing.T) {
	recs, err := ParseFile("testdata/parse/kinds.slt")
	if err != nil {
		t.Fatal(err)
	}
	const f = "kinds.slt"
	at := func(n int) Record { return recordAt(t, recs, f, n) }

	if r := at(4); r.Kind != KindStatement || r.Err != nil || r.HasCount || r.SQL != "CREATE TABLE fruit (name text, qty int)" {
		t.Errorf("statement ok: %+v", r)
	}
	if r := at(7); !r.HasCount || r.Count != 2 || !strings.Contains(r.SQL, "\n  ('pear', 5)") {
		t.Errorf("statement count: %+v", r)
	}
	if r := at(11); r.Err == nil || r.Err.Kind != ErrAny {
		t.Errorf("bare statement error: %+v", r)
	}
	r := at(14)
	if r.Err == nil || r.Err.Kind != ErrRegex {
		t.Fatalf("regex error: %+v", r)
	}
	// Tokens are re-joined with one space, as sqllogictest-rs does.
	if got := r.Err.Regex.String(); got != `relation "no_such_.*" does not exist` {
		t.Errorf("regex = %q", got)
	}
	if r := at(17); r.Err == nil || r.Err.Kind != ErrSQLState || r.Err.SQLState != "42P01" {
		t.Errorf("sqlstate error: %+v", r)
	}
	r = at(20)
	if r.Err == nil || r.Err.Kind != ErrText || r.SQL != "SELECT broken syntax here" {
		t.Fatalf("multi-line error: %+v", r)
	}
	if want := "db error: ERROR: a message from another engine\n\nCaused by:\n  something deeper"; r.Err.Text != want {
		t.Errorf("multi-line text = %q", r.Err.Text)
	}
	r = at(29)
	if r.Kind != KindQuery || r.Types != "TI" || r.Sort != RowSort || r.Label != "fruitlabel" {
		t.Errorf("query header: %+v", r)
	}
	if len(r.Expected) != 2 || r.Expected[0] != "apple\t3" || r.Expected[1] != "pear   5" {
		t.Errorf("expected rows = %q", r.Expected)
	}
	if r := at(35); !r.HasRows || len(r.Expected) != 0 || r.Sort != SortUnset {
		t.Errorf("empty result query: %+v", r)
	}
	if r := at(39); r.Kind != KindQuery || r.Err == nil || r.Err.Regex.String() != "division by zero" {
		t.Errorf("query error: %+v", r)
	}
	r = at(45)
	wantConds := []Condition{{OnlyIf: false, Label: "postgres"}, {OnlyIf: true, Label: "serial"}}
	if len(r.Conditions) != 2 || r.Conditions[0] != wantConds[0] || r.Conditions[1] != wantConds[1] {
		t.Errorf("conditions = %+v", r.Conditions)
	}
	if r.Conn != "second" || r.Sort != NoSort || r.Retry != (Retry{Attempts: 3, Backoff: 250 * time.Millisecond}) {
		t.Errorf("connection/retry: %+v", r)
	}
	if r := at(50); r.Kind != KindSystem || r.SQL != "echo hello" || len(r.Expected) != 1 {
		t.Errorf("system: %+v", r)
	}
	if r := at(55); r.Kind != KindLet || len(r.Vars) != 2 || r.Vars[1] != "b" || r.Conn != "" || r.Conditions != nil {
		t.Errorf("let (conditions and connection must not leak): %+v", r)
	}
	checks := []struct {
		line int
		kind Kind
		arg  string
	}{{58, KindSortMode, "rowsort"}, {60, KindResultMode, "valuewise"}, {62, KindSubstitution, "on"},
		{64, KindHashThreshold, ""}, {66, KindSleep, "10ms"}, {68, KindSubtest, "the_middle"}}
	for _, c := range checks {
		if r := at(c.line); r.Kind != c.kind || r.Arg != c.arg {
			t.Errorf("line %d: got %v %q, want %v %q", c.line, r.Kind, r.Arg, c.kind, c.arg)
		}
	}
	if r := at(64); r.Threshold != 8 {
		t.Errorf("hash-threshold = %d", r.Threshold)
	}
	if r := at(66); r.Duration != 10*time.Millisecond {
		t.Errorf("sleep = %v", r.Duration)
	}
	// The include is spliced in: its record carries the include site.
	inc := recordAt(t, recs, "one.slt.part", 1)
	if inc.Loc.Upper == nil || inc.Loc.Upper.Line != 70 || inc.SQL != "SELECT 'one'" {
		t.Errorf("included record: %+v", inc.Loc)
	}
	if last := recs[len(recs)-1]; last.Kind != KindHalt || last.Loc.Line != 72 {
		t.Errorf("last record = %v at %v", last.Kind, last.Loc)
	}
}

func TestIncludeGlob(t *testing.T) {
	recs, err := ParseFile("testdata/include/main.slt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, strings.Trim(strings.TrimPrefix(r.SQL, "SELECT "), "'"))
	}
	// `**` matches zero or more directories; files come in sorted path
	// order (deeper/three before one); a nested include is expanded too;
	// a plain .slt beside the parts is not matched.
	want := "main before,three,one,one,two,main after"
	if strings.Join(got, ",") != want {
		t.Errorf("got %v, want %v", got, want)
	}
	three := recordAt(t, recs, "three.slt.part", 1)
	if three.Loc.Upper == nil || filepath.Base(three.Loc.Upper.File) != "main.slt" || three.Loc.Upper.Line != 4 {
		t.Errorf("include site of three: %v", three.Loc)
	}
}

func TestIncludeMatchingNothingFails(t *testing.T) {
	_, err := ParseFile("testdata/include/missing.slt")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Loc.Line != 1 {
		t.Fatalf("want parse error at line 1, got %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"unknown record":          "frobnicate now\n",
		"statement with results":  "statement ok\nSELECT 1\n----\n1\n",
		"regex and text":          "statement error oops\nSELECT 1\n----\nmessage\n",
		"bad sort mode":           "query I sideways\nSELECT 1\n",
		"bad count":               "statement count many\nSELECT 1\n",
		"bad regex":               "statement error (unclosed\nSELECT 1\n",
		"missing SQL":             "statement ok\n",
		"bad retry":               "query I retry 3\nSELECT 1\n",
		"bad control":             "control sortmode upward\n",
		"bad hash-threshold":      "hash-threshold lots\n",
		"bad sleep":               "sleep forever\n",
		"onlyif without a label":  "onlyif\nstatement ok\nSELECT 1\n",
		"let without a name":      "let\nSELECT 1\n",
		"system other than ok":    "system error\nfalse\n",
		"resultmode other values": "control resultmode columnwise\n",
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse("x.slt", script); err == nil {
				t.Errorf("parsed without error:\n%s", script)
			}
		})
	}
}

func TestMultilineErrorEndsAtTwoBlankLines(t *testing.T) {
	script := "query error\nSELECT x\n----\nfirst\n\nsecond\n\n\nstatement ok\nSELECT 2\n"
	recs, err := Parse("x.slt", script)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Err.Text != "first\n\nsecond" || recs[1].SQL != "SELECT 2" || recs[1].Loc.Line != 9 {
		t.Fatalf("records: %+v", recs)
	}
}

func TestDurations(t *testing.T) {
	cases := map[string]time.Duration{"5s": 5 * time.Second, "100ms": 100 * time.Millisecond,
		"2min": 2 * time.Minute, "1day": 24 * time.Hour, "3sec": 3 * time.Second}
	for in, want := range cases {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}
