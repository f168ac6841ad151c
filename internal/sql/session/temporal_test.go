package session

import (
	"context"
	"testing"
)

// TestTemporalFilter: now() in a view's WHERE is the barriers' time, so
// rows leave a `ts > now() - …` view and enter a `ts <= now() + …` one as
// time passes, with no input; now() anywhere else in a view is refused.
func TestTemporalFilter(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE ev (id INT PRIMARY KEY, ts TIMESTAMPTZ, lts TIMESTAMP)")
	exec(t, c, "CREATE MATERIALIZED VIEW recent AS SELECT id FROM ev WHERE ts > now() - INTERVAL '1 second' AND id < 100")
	exec(t, c, "CREATE MATERIALIZED VIEW due AS SELECT id FROM ev WHERE now() >= lts")
	// A NULL bound keeps no row (and must not fail the job).
	exec(t, c, "CREATE MATERIALIZED VIEW never AS SELECT id FROM ev WHERE ts > now() - NULL::interval")
	exec(t, c, `INSERT INTO ev VALUES
		(1, now() + INTERVAL '1 hour', now()::timestamp - INTERVAL '1 hour'),
		(2, now() - INTERVAL '1 hour', now()::timestamp + INTERVAL '1 hour'),
		(3, now() + INTERVAL '300 milliseconds', now()::timestamp + INTERVAL '300 milliseconds'),
		(100, now() + INTERVAL '1 hour', NULL)`)
	// Row 3 is in recent for about 1.3 s and due after 0.3 s; rows 1 and
	// 2 stay where they are.
	waitRow(t, c, "SELECT string_agg(id::text, ',' ORDER BY id) FROM recent", "1")
	waitRow(t, c, "SELECT string_agg(id::text, ',' ORDER BY id) FROM due", "1,3")
	waitRow(t, c, "SELECT count(*) FROM never", "0")
	if st, err := p.Engine.Coordinator().Status(context.Background()); err != nil || st.Recoveries > 1 {
		t.Fatalf("recoveries beyond startup: %+v, %v", st, err)
	}
	exec(t, c, "DELETE FROM ev WHERE id IN (1, 3)")
	waitRow(t, c, "SELECT count(*) FROM due", "0")
	waitRow(t, c, "SELECT count(*) FROM recent", "0")

	for _, sql := range []string{
		"CREATE MATERIALIZED VIEW v1 AS SELECT id, now() FROM ev",
		"CREATE MATERIALIZED VIEW v2 AS SELECT id FROM ev WHERE ts > now() OR id = 1",
		"CREATE MATERIALIZED VIEW v3 AS SELECT id FROM ev WHERE id > extract(epoch FROM now())",
		"CREATE MATERIALIZED VIEW v4 AS SELECT count(*) FROM ev GROUP BY id HAVING max(ts) > now()",
	} {
		wantCode(t, c, sql, "0A000")
	}
}
