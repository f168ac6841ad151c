package planner

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sql/parser"
)

// FuzzPlan: whatever SQL text a client sends, parsing and planning it
// (against tables, a view and Sluice's own statements) end in a plan or
// an error, never a panic. Planning does not run anything.
func FuzzPlan(f *testing.F) {
	for _, c := range viewCases() {
		f.Add(c.query)
		f.Add("CREATE MATERIALIZED VIEW v AS " + c.query)
	}
	for _, seed := range []string{
		"INSERT INTO t1 SELECT * FROM t1 ON CONFLICT (id) DO UPDATE SET v = excluded.v + 1",
		"UPDATE t2 SET name = name || 'x' WHERE id IN (SELECT g FROM t1)",
		"DELETE FROM t3 WHERE k BETWEEN 1 AND 2 RETURNING *",
		"SELECT $1::int + 1", "SELECT ARRAY[1, 2][1:1], 'a' LIKE 'b' ESCAPE 'c'",
		"CREATE TABLE n (a numeric(5, 2) DEFAULT 1.5, b varchar(3) NOT NULL, PRIMARY KEY (b))",
		"SELECT * FROM generate_series(1, 3) g(x) WHERE x > (SELECT 1)",
		"WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", "ALTER TABLE t1 SET RATE_LIMIT = 5",
	} {
		f.Add(seed)
	}
	s := newSession(f)
	fixture(s)
	s.exec("CREATE MATERIALIZED VIEW inner_j AS SELECT t1.id, t2.name FROM t1 JOIN t2 ON t1.id = t2.id")
	f.Fuzz(func(t *testing.T, sql string) {
		sts, err := parser.Parse(sql)
		if err != nil {
			return
		}
		for i := range sts {
			st := &sts[i]
			if st.Start < 0 || st.Start > st.End || st.End > len(sql) || (st.Kind == parser.KindStandard) != (st.Node != nil) {
				t.Fatalf("statement %d of %q: range [%d, %d), node %v", i, sql, st.Start, st.End, st.Node != nil)
			}
			if st.Kind == parser.KindStandard {
				_, _ = s.p.Plan(s.ctx, st)
			}
		}
	})
}
