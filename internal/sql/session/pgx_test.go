package session

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func exec(t *testing.T, c *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	tag, err := c.Exec(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag
}

// queryStrings runs sql over the simple protocol and returns each row's
// values as Postgres text, space-separated.
func queryStrings(t *testing.T, c *pgx.Conn, sql string) []string {
	t.Helper()
	res := c.PgConn().Exec(context.Background(), sql)
	rs, err := res.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, r := range rs[len(rs)-1].Rows {
		line := ""
		for i, v := range r {
			if i > 0 {
				line += " "
			}
			if v == nil {
				line += "NULL"
			} else {
				line += string(v)
			}
		}
		out = append(out, line)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v varchar)")
	if tag := exec(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b')"); tag.String() != "INSERT 0 2" {
		t.Fatalf("tag %q", tag)
	}
	exec(t, c, "FLUSH")
	got := queryStrings(t, c, "SELECT id, v FROM t ORDER BY id")
	if len(got) != 2 || got[0] != "1 a" || got[1] != "2 b" {
		t.Fatalf("got %q", got)
	}
	// Extended protocol with parameters.
	var v string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.QueryRow(ctx, "SELECT v FROM t WHERE id = $1", 2).Scan(&v); err != nil || v != "b" {
		t.Fatalf("got %q, %v", v, err)
	}
}
