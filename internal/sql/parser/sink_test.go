package parser

import (
	"slices"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestCreateSink(t *testing.T) {
	for _, tc := range []struct {
		sql         string
		name, from  string
		ifNotExists bool
		query       bool // the AS form: Node is a SELECT
		with        []Option
		format      string
	}{
		{"CREATE SINK s FROM mv WITH (connector = 'blackhole')", "s", "mv", false, false,
			[]Option{{"connector", "blackhole", 28}}, "/"},
		{"CREATE SINK public.s FROM mv WITH (connector = 'blackhole')", "s", "mv", false, false,
			[]Option{{"connector", "blackhole", 35}}, "/"},
		{"create sink if not exists S from public.mv with (connector='blackhole', type='append-only') format plain encode json",
			"s", "mv", true, false, []Option{{"connector", "blackhole", 49}, {"type", "append-only", 72}}, "PLAIN/JSON"},
		{"CREATE SINK s AS SELECT a FROM t WHERE a > 1 WITH (connector = 'blackhole')", "s", "", false, true,
			[]Option{{"connector", "blackhole", 51}}, "/"},
		// A query's own WITH (a CTE, a WITH inside parentheses) is the
		// query's; the sink's is the last, closing the statement.
		{"CREATE SINK s AS WITH x AS (SELECT 1 AS a) SELECT a FROM x WITH (connector = 'blackhole')", "s", "", false, true,
			[]Option{{"connector", "blackhole", 65}}, "/"},
	} {
		sts, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		st := sts[0]
		if st.Kind != KindCreateSink || st.Name != tc.name || st.SinkFrom != tc.from || st.IfNotExists != tc.ifNotExists ||
			!slices.Equal(st.With, tc.with) || st.Format+"/"+st.Encode != tc.format {
			t.Errorf("%s: got %+v", tc.sql, st)
		}
		if _, isSelect := st.Node.GetNode().(*pg_query.Node_SelectStmt); isSelect != tc.query {
			t.Errorf("%s: node %v, want a query %v", tc.sql, st.Node, tc.query)
		}
	}
	for _, sql := range []string{
		"CREATE SINK s FROM mv",                                             // no options
		"CREATE SINK s AS SELECT 1",                                         // no options
		"CREATE SINK FROM mv WITH (connector = 'blackhole')",                // no name
		"CREATE SINK s FROM mv x WITH (connector = 'blackhole')",            // junk before WITH
		"CREATE SINK s FROM mv WITH (connector = 'blackhole') junk",         // junk after
		"CREATE SINK s AS WITH (connector = 'blackhole')",                   // no query
		"CREATE SINK s AS SELECT FROM WHERE WITH (connector = 'blackhole')", // pg_query's error
	} {
		if _, err := Parse(sql); sqlerr.CodeOf(err) != sqlerr.SyntaxError {
			t.Errorf("%s: %v, want a syntax error", sql, err)
		}
	}
	// An error in the query points into the statement as typed.
	_, err := Parse("CREATE SINK s AS SELECT a FROM t u v WITH (connector = 'blackhole')")
	if e, ok := sqlerr.As(err); !ok || e.Position != 36 || e.Message != `syntax error at or near "v"` {
		t.Errorf("error %v, want one at v (position 36)", err)
	}
}

func TestSinkStatements(t *testing.T) {
	sts, err := Parse("SHOW SINKS; DROP SINK IF EXISTS s, t; ALTER SINK s PAUSE; ALTER SINK s SET RATE_LIMIT = 5; SHOW CREATE SINK s")
	if err != nil {
		t.Fatal(err)
	}
	if sts[0].Kind != KindShowSinks {
		t.Errorf("SHOW SINKS: %v", sts[0].Kind)
	}
	if d := sts[1].Node.GetDropStmt(); !sts[1].Sink || d == nil || d.RemoveType != pg_query.ObjectType_OBJECT_VIEW || !d.MissingOk || len(d.Objects) != 2 {
		t.Errorf("DROP SINK: sink %v node %v", sts[1].Sink, sts[1].Node)
	}
	if sts[2].Kind != KindAlterPause || sts[2].Object != ObjectSink || sts[2].Name != "s" {
		t.Errorf("ALTER SINK PAUSE: %+v", sts[2])
	}
	if sts[3].Kind != KindAlterRateLimit || sts[3].Object != ObjectSink || *sts[3].Limit != 5 {
		t.Errorf("ALTER SINK SET RATE_LIMIT: %+v", sts[3])
	}
	if sts[4].Kind != KindShowCreate || sts[4].Object != ObjectSink || sts[4].Name != "s" {
		t.Errorf("SHOW CREATE SINK: %+v", sts[4])
	}
}
