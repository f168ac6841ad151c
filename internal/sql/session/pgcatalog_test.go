package session

import (
	"slices"
	"testing"
)

// TestCatalogQueries checks that queries over pg_catalog and
// information_schema have SQL's semantics (they are planned like any
// query), against a database with tables a, b and view v. pg_class lists
// the system relations too, as in Postgres, so most cases keep to
// schema public (oid 2200); a's primary key is its index a_pkey there.
func TestCatalogQueries(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE a (id int PRIMARY KEY, x varchar)")
	exec(t, c, "CREATE TABLE b (k bigint, y numeric)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT id FROM a")
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT relname FROM pg_class WHERE relkind NOT IN ('m', 'i') AND relnamespace = 2200 ORDER BY relname DESC", []string{"b", "a"}},
		{"SELECT relname FROM pg_class WHERE relkind = ANY ('{m,x}') ", []string{"v"}},
		{"SELECT relname FROM pg_catalog.pg_class WHERE relname ~ '^[ab]$' AND relname NOT LIKE 'b%' ", []string{"a"}},
		{`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pg\_%' OR nspname ILIKE 'PUB%' ORDER BY 1`, []string{"pg_catalog", "public"}},
		// LEFT JOIN keeps unmatched rows with NULLs; counts per group.
		{"SELECT c.relname, count(a.attname) FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id' WHERE c.relnamespace = 2200 GROUP BY c.relname ORDER BY c.relname",
			[]string{"a 1", "a_pkey 1", "b 0", "v 1"}},
		{"SELECT c.relname, d.description FROM pg_class c LEFT JOIN pg_description d ON d.objoid = c.oid WHERE c.relname = 'a'", []string{"a NULL"}},
		// Correlated subqueries in WHERE and the target list.
		{"SELECT relname, (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid) FROM pg_class c WHERE EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'y')",
			[]string{"b 2"}},
		{"SELECT relname FROM pg_class WHERE oid IN (SELECT attrelid FROM pg_attribute WHERE attname = 'id') ORDER BY relname", []string{"a", "a_pkey", "jobs", "v"}},
		// Set operations, CTEs, DISTINCT, LIMIT/OFFSET, CASE, COALESCE.
		{"SELECT relkind FROM pg_class WHERE relnamespace = 2200 UNION SELECT 'r' ORDER BY 1", []string{"i", "m", "r"}},
		{"SELECT relkind FROM pg_class WHERE relnamespace = 2200 UNION ALL SELECT relkind FROM pg_class WHERE relkind = 'm' ORDER BY 1", []string{"i", "m", "m", "r", "r"}},
		{"WITH t AS (SELECT relname AS n FROM pg_class WHERE relnamespace = 2200) SELECT n FROM t ORDER BY n LIMIT 2 OFFSET 1", []string{"a_pkey", "b"}},
		{"SELECT DISTINCT relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY relkind", []string{"i", "m", "r"}},
		{"SELECT CASE relkind WHEN 'r' THEN 'table' ELSE 'other' END, coalesce(NULL, relname) FROM pg_class WHERE pg_table_is_visible(oid) AND relnamespace <> 11 ORDER BY 2", []string{"table a", "other a_pkey", "table b", "other v"}},
		// Aggregates over no rows give one row; NULLs sort last ascending.
		{"SELECT count(*), max(relname) FROM pg_class WHERE false", []string{"0 NULL"}},
		{"SELECT attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'b' ORDER BY attnum DESC", []string{"y", "k"}},
		{"SELECT format_type(atttypid, atttypmod) FROM pg_attribute a, pg_class c WHERE c.oid = a.attrelid AND c.relname = 'b' ORDER BY attnum", []string{"bigint", "numeric"}},
		{"SELECT 'a'::regclass = oid FROM pg_class WHERE relname = 'a'", []string{"t"}},
		{"SELECT table_name, column_name FROM information_schema.columns WHERE table_name = 'v'", nil},
	}
	for _, tc := range cases {
		got := queryStrings(t, c, tc.sql)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.sql, got, tc.want)
		}
	}
}

// A FROM-less call the catalog evaluator does not know is planned, so it
// fails as an unknown function instead of quietly reading as NULL; the
// catalog helpers drivers call still answer.
func TestUnknownFunctionIsNotACatalogQuery(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	wantCode(t, c, "SELECT pg_sleep(0.01)", "42883")
	if got := queryStrings(t, c, "SELECT pg_catalog.format_type(23, -1)"); len(got) != 1 || got[0] != "integer" {
		t.Fatalf("format_type = %q", got)
	}
}
