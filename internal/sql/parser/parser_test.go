package parser

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestParseKinds(t *testing.T) {
	cases := []struct {
		sql  string
		kind Kind
		name string
	}{
		{"FLUSH", KindFlush, ""},
		{"flush;", KindFlush, ""},
		{"SHOW JOBS", KindShowJobs, ""},
		{"show tables", KindShowTables, ""},
		{"SHOW MATERIALIZED VIEWS;", KindShowMaterializedViews, ""},
		{"RECOVER", KindRecover, ""},
		{"RECOVER MATERIALIZED VIEW public.mv", KindRecover, "mv"},
		{"DESCRIBE \"T\"", KindDescribe, "T"},
		{"ALTER MATERIALIZED VIEW mv PAUSE", KindAlterPause, "mv"},
		{"alter table t resume", KindAlterResume, "t"},
		{"SELECT 1", KindStandard, ""},
		{"ALTER TABLE t ADD COLUMN x int", KindStandard, ""},
	}
	for _, c := range cases {
		sts, err := Parse(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if len(sts) != 1 || sts[0].Kind != c.kind || sts[0].Name != c.name {
			t.Errorf("%s: got %+v", c.sql, sts)
		}
		if c.kind == KindStandard && sts[0].Node == nil {
			t.Errorf("%s: no AST", c.sql)
		}
	}
}

func TestRateLimitAndCancel(t *testing.T) {
	sts, err := Parse("ALTER MATERIALIZED VIEW mv SET BACKFILL_RATE_LIMIT = 10; ALTER TABLE t SET SOURCE_RATE_LIMIT TO DEFAULT; CANCEL JOBS 3, 4")
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 {
		t.Fatalf("got %d statements", len(sts))
	}
	if s := sts[0]; s.Kind != KindAlterRateLimit || s.Object != ObjectMaterializedView || s.Setting != "backfill_rate_limit" || s.Limit == nil || *s.Limit != 10 {
		t.Errorf("first: %+v", s)
	}
	if s := sts[1]; s.Kind != KindAlterRateLimit || s.Object != ObjectTable || s.Limit != nil {
		t.Errorf("second: %+v", s)
	}
	if s := sts[2]; s.Kind != KindCancelJobs || len(s.JobIDs) != 2 || s.JobIDs[1] != 4 {
		t.Errorf("third: %+v", s)
	}
}

func TestMultiStatementOffsets(t *testing.T) {
	sql := "CREATE TABLE t (a int) APPEND ONLY; /* c */ SELECT 'x;y' FROM t;;  FLUSH"
	sts, err := Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 3 {
		t.Fatalf("got %d statements", len(sts))
	}
	if !sts[0].AppendOnly || sts[0].Node.GetCreateStmt() == nil {
		t.Errorf("append only not recognized: %+v", sts[0])
	}
	if got := sts[1].SQL(); got != "SELECT 'x;y' FROM t" {
		t.Errorf("second statement text %q", got)
	}
	sel := sts[1].Node.GetSelectStmt()
	loc := int(sel.TargetList[0].GetResTarget().Val.GetAConst().Location) + sts[1].Base
	if sql[loc:loc+5] != "'x;y'" {
		t.Errorf("location %d does not point into the whole input", loc)
	}
	if sts[2].Kind != KindFlush {
		t.Errorf("third: %+v", sts[2])
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		sql string
		msg string
		pos int
	}{
		{"SELEC 1", `syntax error at or near "SELEC"`, 1},
		{"SELECT 1; SELECT FROM WHERE", `syntax error at or near "WHERE"`, 23},
		{"SELECT 'é'; SELEC 1", `syntax error at or near "SELEC"`, 13},
		{"SELECT (1", "syntax error at end of input", 10},
		{"ALTER TABLE t SET RATE_LIMIT = x", `syntax error at or near "x"`, 32},
		{"CANCEL JOBS", "syntax error at end of input", 12},
		{"FLUSH now", `syntax error at or near "now"`, 7},
		// Characters blanked out of pg_query's text (a custom statement's
		// non-ASCII name) still count once.
		{`DESCRIBE "tëst€"; SELECT FROM WHERE`, `syntax error at or near "WHERE"`, 31},
		// The first error wins, whichever grammar finds it.
		{"SELEC 1; FLUSH now", `syntax error at or near "SELEC"`, 1},
		{"FLUSH now; SELEC 1", `syntax error at or near "now"`, 7},
		{"SELECT 1; SELEC 2; FLUSH now", `syntax error at or near "SELEC"`, 11},
	}
	for _, c := range cases {
		_, err := Parse(c.sql)
		e, ok := sqlerr.As(err)
		if !ok || e.Code != sqlerr.SyntaxError || e.Message != c.msg || e.Position != c.pos {
			t.Errorf("%s: got %#v, want %q at %d", c.sql, err, c.msg, c.pos)
		}
	}
}

// TestManyStatementsParseInBatches: a long multi-statement text is parsed
// by pg_query a batch of statements at a time, not once per statement
// with all the text before it (which was quadratic: 40 000 statements
// took 52 s), and every statement keeps its own range, tree and positions.
func TestManyStatementsParseInBatches(t *testing.T) {
	var b strings.Builder
	const n = 20000
	for i := range n {
		if i%1000 == 0 {
			b.WriteString("FLUSH; CREATE TABLE t (a int) APPEND ONLY;")
		}
		b.WriteString("select 1::int;")
	}
	before := treesParsed.Load()
	sts, err := Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	standard := n + n/1000 // the CREATE TABLEs too
	if got, want := treesParsed.Load()-before, int64((standard+batchStatements-1)/batchStatements); got != want {
		t.Errorf("pg_query parsed %d times, want %d", got, want)
	}
	if len(sts) != n+2*n/1000 {
		t.Fatalf("got %d statements", len(sts))
	}
	for i, st := range sts {
		want := "select 1::int"
		switch i % 1002 {
		case 0:
			want = "FLUSH"
		case 1:
			want = "CREATE TABLE t (a int) APPEND ONLY"
		}
		if st.SQL() != want || (st.Kind == KindStandard) != (st.Node != nil) {
			t.Fatalf("statement %d: %q %+v", i, st.SQL(), st.Node)
		}
		if i%1002 == 1 && (!st.AppendOnly || st.Node.GetCreateStmt() == nil) {
			t.Fatalf("statement %d lost APPEND ONLY: %+v", i, st)
		}
		if sel := st.Node.GetSelectStmt(); sel != nil {
			loc := sel.TargetList[0].GetResTarget().Val.GetTypeCast().Arg.GetAConst().Location
			if at := st.Base + int(loc); at < st.Start || at >= st.End || st.Input[at] != '1' {
				t.Fatalf("statement %d: location %d+%d is not its constant", i, st.Base, loc)
			}
		}
	}
}

// TestParseCanceled: a cancelled context stops parsing before the next
// batch and returns its cause.
func TestParseCanceled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cancel(stop)
	before := treesParsed.Load()
	if _, err := ParseContext(ctx, strings.Repeat("select 1;", 5000)); err != stop {
		t.Errorf("got %v, want the cause", err)
	}
	if n := treesParsed.Load() - before; n != 0 {
		t.Errorf("parsed %d batches after the cancel", n)
	}
}

func TestDeparseExprRoundTrip(t *testing.T) {
	for _, src := range []string{"42", "'none'", "now()", "1 + 2 * 3", "'2024-01-01'::date", "NULL"} {
		n, err := ParseExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		text, err := DeparseExpr(n)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		again, err := ParseExpr(text)
		if err != nil {
			t.Fatalf("%s → %s: %v", src, text, err)
		}
		if text2, _ := DeparseExpr(again); text2 != text {
			t.Fatalf("%s: deparse not stable: %q then %q", src, text, text2)
		}
	}
	if _, err := ParseExpr("1, 2"); err == nil {
		t.Fatal("two expressions accepted")
	}
	if _, err := ParseExpr("1 FROM t"); err == nil {
		t.Fatal("a FROM accepted")
	}
}

func TestParseAlterAmplification(t *testing.T) {
	sts, err := Parse("ALTER MATERIALIZED VIEW amp SET (amplification_limit = 1000, amplification_action = 'Pause'); " +
		"ALTER SINK s SET (amplification_limit = 0)")
	if err != nil {
		t.Fatal(err)
	}
	if s := sts[0]; s.Kind != KindAlterAmplification || s.Name != "amp" || s.AmpLimit == nil || *s.AmpLimit != 1000 || s.AmpAction != "pause" {
		t.Fatalf("%+v", s)
	}
	if s := sts[1]; s.Kind != KindAlterAmplification || s.Object != ObjectSink || *s.AmpLimit != 0 || s.AmpAction != "" {
		t.Fatalf("%+v", s)
	}
	for _, bad := range []string{"ALTER MATERIALIZED VIEW amp SET (amplification_limit = x)",
		"ALTER MATERIALIZED VIEW amp SET (colour = 1)", "ALTER MATERIALIZED VIEW amp SET (amplification_limit = 1"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
	if _, err := Parse("ALTER MATERIALIZED VIEW amp SET (colour = 1)"); err == nil ||
		!strings.Contains(err.Error(), `"colour"`) || sqlerr.CodeOf(err) != sqlerr.InvalidParameterValue {
		t.Errorf("an unknown option: %v, want 22023 naming it", err)
	}
}
