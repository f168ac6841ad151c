package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestInsertConflicts: a taken primary key fails an INSERT with 23505 and
// writes nothing of it; ON CONFLICT DO NOTHING skips it; DO UPDATE updates
// the stored row from EXCLUDED, under its WHERE; views follow.
func TestInsertConflicts(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE kv (k int PRIMARY KEY, v int, n int DEFAULT 1)")
	exec(t, c, "CREATE MATERIALIZED VIEW s AS SELECT count(*) AS c, sum(v) AS sv, sum(n) AS sn FROM kv")
	exec(t, c, "INSERT INTO kv VALUES (1, 10), (2, 20)")
	pe := wantCode(t, c, "INSERT INTO kv VALUES (3, 30), (1, 11)", "23505")
	if pe.Detail != "Key (k)=(1) already exists." || pe.ConstraintName != "" && pe.ConstraintName != "kv_pkey" {
		t.Fatalf("detail %q", pe.Detail)
	}
	wantCode(t, c, "INSERT INTO kv VALUES (5, 1), (5, 2)", "23505")
	_, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader("7\t70\n2\t21\n"), "COPY kv (k, v) FROM STDIN")
	var cpe *pgconn.PgError
	if !errors.As(err, &cpe) || cpe.Code != "23505" {
		t.Fatalf("COPY onto a taken key: %v, want 23505", err)
	}
	wantRows(t, c, "SELECT k, v FROM kv ORDER BY k", "1 10", "2 20")
	wantTag(t, c, "INSERT INTO kv VALUES (1, 99), (3, 30) ON CONFLICT DO NOTHING", "INSERT 0 1")
	wantTag(t, c, "INSERT INTO kv VALUES (1, 5), (2, 6), (4, 40) ON CONFLICT (k) DO UPDATE SET v = kv.v + excluded.v, n = n + 1 WHERE excluded.v < 6", "INSERT 0 2")
	wantRows(t, c, "SELECT k, v, n FROM kv ORDER BY k", "1 15 2", "2 20 1", "3 30 1", "4 40 1")
	wantCode(t, c, "INSERT INTO kv VALUES (1, 1), (1, 2) ON CONFLICT (k) DO UPDATE SET v = 0", "21000")
	wantCode(t, c, "INSERT INTO kv VALUES (1, 1) ON CONFLICT (v) DO NOTHING", "42P10")
	wantCode(t, c, "INSERT INTO kv VALUES (1, 1) ON CONFLICT DO UPDATE SET v = 0", "42601")
	wantTag(t, c, "INSERT INTO kv SELECT k, v FROM kv ON CONFLICT ON CONSTRAINT kv_pkey DO UPDATE SET v = excluded.v * 2", "INSERT 0 4")
	wantRows(t, c, "SELECT c, sv, sn FROM s", "4 210 5")
}
