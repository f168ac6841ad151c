package crosscheck

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/nexmark"
)

// Setup creates the Nexmark tables and the count_char function (q14's
// user-defined function, written in SQL) on each connection.
func Setup(ctx context.Context, conns ...*pgx.Conn) error {
	for _, c := range conns {
		for _, ddl := range nexmark.CreateTable {
			if err := exec(ctx, c, ddl); err != nil {
				return err
			}
		}
		if err := exec(ctx, c, "CREATE FUNCTION count_char(s varchar, c varchar) RETURNS int LANGUAGE SQL AS "+
			"$$SELECT length(s) - length(replace(s, c, ''))$$"); err != nil {
			return err
		}
	}
	return nil
}

// CreateViews creates view v<i> of each query on Sluice's connection.
func CreateViews(ctx context.Context, sl *pgx.Conn, qs []Query) error {
	for i, q := range qs {
		if err := exec(ctx, sl, fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS %s", i, q.View)); err != nil {
			return err
		}
	}
	return nil
}

// Load writes events [from, to) of g into each connection's tables.
func Load(ctx context.Context, g *nexmark.Generator, from, to int64, conns ...*pgx.Conn) error {
	rows := g.Rows(from, to, nexmark.COPY)
	for _, c := range conns {
		for k := range rows {
			if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(rows[k]), "COPY "+nexmark.Tables[k]+" FROM STDIN"); err != nil {
				return fmt.Errorf("COPY %s: %w", nexmark.Tables[k], err)
			}
		}
	}
	return nil
}

// Changes update and delete loaded rows so that rows move between
// groups, join partners and filters.
var Changes = []string{
	"DELETE FROM bid WHERE channel = 'Apple' OR price < 1000",
	"UPDATE auction SET category = 10 WHERE id % 7 = 0",
	"UPDATE person SET state = 'or' WHERE id % 5 = 0",
	"UPDATE bid SET bidder = bidder + 1, price = price * 2 WHERE auction % 3 = 0",
}

// ApplyChanges runs Changes on each connection.
func ApplyChanges(ctx context.Context, conns ...*pgx.Conn) error {
	for _, c := range conns {
		for _, q := range Changes {
			if err := exec(ctx, c, q); err != nil {
				return err
			}
		}
	}
	return nil
}

// Result is one view's comparison: the rows each side holds, and the
// first difference ("" when equal).
type Result struct {
	Query      Query
	Sluice, PG int
	FirstDiff  string
}

// Equal reports whether the view held PostgreSQL's rows, and PostgreSQL
// had some (a query no event exercises proves nothing).
func (r Result) Equal() bool { return r.FirstDiff == "" && r.PG > 0 }

// Compare flushes Sluice, then compares each view v<i> with PostgreSQL's
// query over its tables.
func Compare(ctx context.Context, pg, sl *pgx.Conn, qs []Query) ([]Result, error) {
	if err := exec(ctx, sl, "FLUSH"); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(qs))
	for i, q := range qs {
		want, err := rows(ctx, pg, fmt.Sprintf("SELECT %s FROM (%s) v ORDER BY %s", q.Compare, PGWindows(q.View), q.Compare))
		if err != nil {
			return nil, err
		}
		got, err := rows(ctx, sl, fmt.Sprintf("SELECT %s FROM v%d ORDER BY %s", q.Compare, i, q.Compare))
		if err != nil {
			return nil, err
		}
		r := Result{Query: q, Sluice: len(got), PG: len(want)}
		if !slices.Equal(got, want) {
			r.FirstDiff = firstDiff(got, want)
		}
		out = append(out, r)
	}
	return out, nil
}

func exec(ctx context.Context, c *pgx.Conn, q string) error {
	if _, err := c.Exec(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// rows returns each row as its columns' text joined by '|'.
func rows(ctx context.Context, c *pgx.Conn, q string) ([]string, error) {
	rs, err := c.Query(ctx, q, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	var out []string
	for rs.Next() {
		var cols []string
		for _, v := range rs.RawValues() {
			cols = append(cols, string(v))
		}
		out = append(out, strings.Join(cols, "|"))
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return out, nil
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("row %d: sluice %q, postgres %q", i, g, w)
		}
	}
	return "(none)"
}
