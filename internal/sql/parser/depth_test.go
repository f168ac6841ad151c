package parser

import (
	"context"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// chain joins n copies of term with sep.
func chain(term, sep string, n int) string {
	return strings.Repeat(term+sep, n-1) + term
}

// TestDeepStatementsRefused: a statement whose tree would be too deep to
// serialize gets 54001 at its own position, whatever its shape. (30 000
// terms of 1+1+… overflowed the C stack and killed the server.)
func TestDeepStatementsRefused(t *testing.T) {
	cases := map[string]string{
		"plus chain":        "select " + chain("1", "+", 30000),
		"huge plus chain":   "select " + chain("1", "+", 300000),
		"cast chain":        "select 1" + strings.Repeat("::int", 20000),
		"union chain":       chain("select 1", " union all ", 20000),
		"join chain":        "select 1 from t" + strings.Repeat(" join t on true and true", 11000),
		"concat in a where": "select 1 from t where a = 1 and " + chain("'x'", "||", 12000) + " = b",
	}
	for name, sql := range cases {
		_, err := Parse("select 1; " + sql)
		se, ok := sqlerr.As(err)
		if !ok || se.Code != sqlerr.StatementTooComplex {
			t.Errorf("%s: got %v, want 54001", name, err)
			continue
		}
		if se.Position != len("select 1; ")+1 {
			t.Errorf("%s: position %d, want the second statement's start", name, se.Position)
		}
	}
}

// TestWideStatementsParse: long statements that are wide rather than deep
// (lists, AND/OR chains, VALUES) and chains Postgres itself runs are not
// refused.
func TestWideStatementsParse(t *testing.T) {
	cases := map[string]string{
		"in list":      "select 1 where 1 in (" + chain("1", ",", 100000) + ")",
		"or chain":     "select 1 where " + chain("1 = 1", " or ", 30000),
		"and chain":    "select 1 where " + chain("1 = 1", " and ", 30000),
		"between ands": "select 1 where " + chain("1 between 0 and 2", " and ", 10000),
		"values":       "values " + chain("(1, 'a')", ",", 100000),
		"select list":  "select " + chain("1 + 1", ",", 50000),
		"plus chain":   "select " + chain("1", "+", 4000),
		"union chain":  chain("select 1", " union all ", 3000),
	}
	for name, sql := range cases {
		if _, err := Parse(sql); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestNestingBoundCoversTree: for random statements, the tree pg_query
// returns is never deeper than the bound allows for (two messages per
// level, a Node and the expression in it, plus a constant: the statement's
// own messages above its expressions, a leaf's below, and an OR over
// ANDs), so a statement that passes checkNesting fits unmarshalTree's
// limit and the C serializer's stack.
func TestNestingBoundCoversTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sql := genQuery(t, 3)
		tree, err := pg_query.Parse(sql)
		if err != nil {
			return // not valid SQL: the generator's precedence is loose
		}
		scan, err := pg_query.Scan(sql)
		if err != nil {
			t.Fatal(err)
		}
		bound := nestingBound(scan.Tokens)
		if d := messageDepth(tree.ProtoReflect()); d > 2*bound+16 {
			t.Fatalf("tree %d messages deep, bound %d: %s", d, bound, sql)
		}
	})
}

// genExpr returns a random expression, in parentheses where an operator
// binding more tightly than its operand would not parse; the rest of the
// grammar's precedence is left to the parser.
func genExpr(t *rapid.T, depth int) string {
	if depth == 0 {
		return rapid.SampledFrom([]string{"1", "x", "'s'", "null", "t.y"}).Draw(t, "leaf")
	}
	e := func() string { return genExpr(t, depth-1) }
	tight := func() string { return "(" + e() + ")" }
	switch rapid.IntRange(0, 13).Draw(t, "shape") {
	case 0:
		return chainOf(t, []string{" + ", " * ", " || "}, tight)
	case 1:
		return chainOf(t, []string{" and ", " or "}, e)
	case 2:
		return tight() + rapid.SampledFrom([]string{" = ", " < ", " is distinct from "}).Draw(t, "cmp") + tight()
	case 3:
		return "not " + tight()
	case 4:
		return "-" + tight()
	case 5:
		return tight() + strings.Repeat("::int", rapid.IntRange(1, 30).Draw(t, "casts"))
	case 6:
		return "f(" + e() + ", " + e() + ")"
	case 7:
		return "case when " + e() + " then " + e() + " else " + e() + " end"
	case 8:
		return tight() + " between " + tight() + " and " + tight()
	case 9:
		return tight() + " in (" + e() + ", " + e() + ")"
	case 10:
		return "(" + genQuery(t, depth-1) + ")"
	case 11:
		return "array[" + e() + ", " + e() + "]"
	case 12:
		return tight() + " is null"
	default:
		return "coalesce(" + e() + ")"
	}
}

// chainOf joins up to 40 terms with one of ops.
func chainOf(t *rapid.T, ops []string, term func() string) string {
	op := rapid.SampledFrom(ops).Draw(t, "op")
	terms := make([]string, rapid.IntRange(2, 40).Draw(t, "terms"))
	for i := range terms {
		terms[i] = term()
	}
	return strings.Join(terms, op)
}

func genQuery(t *rapid.T, depth int) string {
	q := "select " + genExpr(t, depth) + ", " + genExpr(t, depth) + " from t"
	for range rapid.IntRange(0, 30).Draw(t, "joins") { // ON … AND … does not end the join chain
		q += " join u on " + genExpr(t, max(depth-2, 0)) + " and " + genExpr(t, max(depth-2, 0))
	}
	if rapid.Bool().Draw(t, "where") {
		q += " where " + genExpr(t, depth)
	}
	for range rapid.IntRange(0, 20).Draw(t, "unions") {
		q += " union all select 1, " + genExpr(t, max(depth-1, 0))
	}
	return q
}

// messageDepth is the depth of the message tree m.
func messageDepth(m protoreflect.Message) int {
	deepest := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				deepest = max(deepest, messageDepth(l.Get(i).Message()))
			}
		case fd.Message() != nil && !fd.IsMap():
			deepest = max(deepest, messageDepth(v.Message()))
		}
		return true
	})
	return deepest + 1
}

// TestParseWithinMemory: a text whose parse would take more than the
// memory limit is refused with 54000 before it is parsed, by its length
// or by its tokens; without a limit, or within it, it parses.
func TestParseWithinMemory(t *testing.T) {
	list := "select 1 where 1 in (" + chain("1", ",", 100000) + ")" // 200 000 tokens, 200 KB
	ctx := context.Background()
	for limit, want := range map[int64]sqlerr.Code{
		0:         "",
		1 << 30:   "",
		64 << 20:  sqlerr.ProgramLimitExceeded, // tokens: 200 000 x 1.5 KB = 293 MB
		10 << 20:  sqlerr.ProgramLimitExceeded, // length: 200 KB x 96 = 18 MB
		100 << 10: sqlerr.ProgramLimitExceeded,
	} {
		_, err := ParseWithin(ctx, list, limit)
		se, _ := sqlerr.As(err)
		switch {
		case want == "" && err != nil:
			t.Errorf("limit %d: %v", limit, err)
		case want != "" && (se == nil || se.Code != want || se.Hint == ""):
			t.Errorf("limit %d: %v, want %s", limit, err, want)
		}
	}
}
