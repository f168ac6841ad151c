package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A scalar subquery's value is read where its row count is at most one,
// fails with 21000 where it is more, and only on the rows that reach it.
func TestSingleRow(t *testing.T) {
	ts := []types.Type{i64, str}
	one := Desc{Kind: KindSingleRow, Args: []Desc{Input(0, i64), Input(1, str)}}
	got, err := evalText(t, NewStrictContext(0), ts, "+ 1 a\n+ 0 NULL\n+ NULL NULL", one)
	if err != nil || got != "a NULL NULL" {
		t.Fatalf("counts 1, 0, NULL: got %q, %v", got, err)
	}
	_, err = evalText(t, NewStrictContext(0), ts, "+ 1 a\n+ 2 b", one)
	if sqlerr.CodeOf(err) != sqlerr.CardinalityViolation {
		t.Fatalf("count 2 in a strict context: got %v, want 21000", err)
	}
	ctx := &Context{}
	got, err = evalText(t, ctx, ts, "+ 1 a\n+ 2 b", one)
	if err != nil || got != "a NULL" || ctx.RowErrors() != 1 {
		t.Fatalf("count 2, non-strict: got %q, %v, %d row errors", got, err, ctx.RowErrors())
	}
	// Under a CASE branch the row does not take, the count is not looked at.
	guarded := Node(KindCase, Func("<", Input(0, i64), lit("2", i64)), one)
	got, err = evalText(t, NewStrictContext(0), ts, "+ 1 a\n+ 2 b", guarded)
	if err != nil || got != "a NULL" {
		t.Fatalf("guarded: got %q, %v", got, err)
	}
	if _, err := Build(Desc{Kind: KindSingleRow, Args: []Desc{Input(1, str), Input(1, str)}}, ts); err == nil {
		t.Fatal("a text count built")
	}
}
