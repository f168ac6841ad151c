package parser

import "testing"

func TestWatermarkClause(t *testing.T) {
	cases := []struct {
		sql      string
		col, exp string
		eowc     bool
		err      bool
	}{
		{sql: "CREATE SOURCE s (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector='datagen')",
			col: "ts", exp: "ts - INTERVAL '5' SECOND"},
		{sql: "CREATE TABLE t (WATERMARK FOR \"Ts\" AS \"Ts\", a int, \"Ts\" timestamp) APPEND ONLY", col: "Ts", exp: `"Ts"`},
		{sql: "CREATE TABLE t (a int, ts timestamp, WATERMARK FOR ts AS date_trunc('minute', ts)) APPEND ONLY",
			col: "ts", exp: "date_trunc('minute', ts)"},
		{sql: "CREATE MATERIALIZED VIEW v AS SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE", eowc: true},
		{sql: "EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE", eowc: true},
		{sql: "CREATE SOURCE s (ts timestamp, WATERMARK FOR ts) WITH (connector='datagen')", err: true},
		{sql: "CREATE SOURCE s (ts timestamp, WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts) WITH (connector='datagen')", err: true},
		{sql: "SELECT 1 EMIT ON WINDOW CLOSE", err: true},
	}
	for _, c := range cases {
		sts, err := Parse(c.sql)
		if c.err {
			if err == nil {
				t.Errorf("%s: no error", c.sql)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		st := sts[0]
		if st.EmitOnWindowClose != c.eowc {
			t.Errorf("%s: EmitOnWindowClose %v", c.sql, st.EmitOnWindowClose)
		}
		if c.col == "" {
			if st.Watermark != nil {
				t.Errorf("%s: watermark %+v", c.sql, st.Watermark)
			}
			continue
		}
		if w := st.Watermark; w == nil || w.Column != c.col || w.Expr != c.exp || c.sql[w.Offset:w.Offset+len(w.Expr)] != w.Expr {
			t.Errorf("%s: watermark %+v, want %s AS %s", c.sql, st.Watermark, c.col, c.exp)
		}
		if st.Node == nil || len(st.Node.GetCreateStmt().GetTableElts()) == 0 && st.Node.GetCreateTableAsStmt() == nil && st.Node.GetExplainStmt() == nil {
			t.Errorf("%s: pg_query did not parse the rest", c.sql)
		}
	}
}
