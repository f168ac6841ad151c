package session

import (
	"context"
	_ "embed"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
)

// psqlDescribeItems is what psql 15 sends for \d items (psql -E), with
// the table's oid as '1'.
//
//go:embed testdata/psql_describe_items.sql
var psqlDescribeItems string

// BenchmarkPsqlDescribe runs psql's \d items queries (9 statements) over
// a catalog of 22 relations: the cost of a catalog query planned and run
// like any query, over pg_class and pg_attribute rows built per
// statement.
func BenchmarkPsqlDescribe(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p, err := StartPlayground(ctx, engine.Options{BarrierInterval: 50 * time.Millisecond}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	c, err := pgx.Connect(ctx, p.Server.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	for _, sql := range []string{
		"CREATE TABLE items (id int PRIMARY KEY, label varchar(8) DEFAULT 'none', price numeric(10,2) NOT NULL)",
		"CREATE MATERIALIZED VIEW cheap AS SELECT id, label FROM items WHERE price < 10",
	} {
		if _, err := c.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		if _, err := c.Exec(ctx, "CREATE TABLE t"+strconv.Itoa(i)+" (a int PRIMARY KEY, b varchar, c numeric)"); err != nil {
			b.Fatal(err)
		}
	}
	var oid int64
	if err := c.QueryRow(ctx, "SELECT 'items'::regclass::oid").Scan(&oid); err != nil {
		b.Fatal(err)
	}
	var stmts []string
	for _, s := range strings.Split(psqlDescribeItems, ";;") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, strings.ReplaceAll(s, "'1'", "'"+strconv.FormatInt(oid, 10)+"'"))
		}
	}
	b.ResetTimer()
	for range b.N {
		for _, s := range stmts {
			rows, err := c.Query(ctx, s, pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				b.Fatalf("%v\n%s", err, s)
			}
		}
	}
}
