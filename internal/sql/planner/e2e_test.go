package planner

import (
	"slices"
	"strings"
	"testing"
)

// viewCase is a materialized view and the rows Postgres returns for its
// query over the fixture data.
type viewCase struct {
	name, query string
	want        []string
}

func viewCases() []viewCase {
	return []viewCase{
		{"inner_j", "SELECT t1.id, t2.name FROM t1 JOIN t2 ON t1.id = t2.id",
			[]string{"1 a", "1 a2", "2 b"}},
		{"left_j", "SELECT t1.id, t2.name FROM t1 LEFT JOIN t2 ON t1.id = t2.id",
			[]string{"1 a", "1 a2", "2 b", "3 NULL", "4 NULL"}},
		{"right_j", "SELECT t1.id AS l, t2.name FROM t1 RIGHT OUTER JOIN t2 ON t1.id = t2.id",
			[]string{"1 a", "1 a2", "2 b", "NULL e"}},
		{"full_j", "SELECT t1.id AS l, t2.id AS r, t2.name FROM t1 FULL JOIN t2 ON t2.id = t1.id",
			[]string{"1 1 a", "1 1 a2", "2 2 b", "3 NULL NULL", "4 NULL NULL", "NULL 5 e"}},
		{"residual_j", "SELECT t1.id, t2.name FROM t1 LEFT JOIN t2 ON t1.id = t2.id AND t2.name <> 'a'",
			[]string{"1 a2", "2 b", "3 NULL", "4 NULL"}},
		{"comma_j", "SELECT t1.id, t2.name FROM t1, t2 WHERE t1.id = t2.id AND t1.v > 10",
			[]string{"2 b"}},
		{"grouped", "SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM t1 GROUP BY g",
			[]string{"1 2 30 10 20", "2 1 30 30 30", "NULL 1 40 40 40"}},
		{"global", "SELECT count(*) AS n, count(g) AS ng, count(DISTINCT g) AS dg, sum(v) AS s, bool_and(v > 5) AS b FROM t1",
			[]string{"4 3 2 100 t"}},
		{"strings", "SELECT string_agg(name, ',' ORDER BY name) AS names FROM t2",
			[]string{"a,a2,b,e"}},
		{"having_v", "SELECT g, sum(v) FILTER (WHERE v > 10) AS s FROM t1 GROUP BY g HAVING count(*) > 1",
			[]string{"1 20"}},
		{"star_grouped", "SELECT * FROM (SELECT g, v > 15 AS big FROM t1) s GROUP BY big, g",
			[]string{"1 f", "1 t", "2 t", "NULL t"}},
		{"by_pk", "SELECT t1.*, v + 1 AS w, count(t2.name) AS n FROM t1 LEFT JOIN t2 ON t1.id = t2.id GROUP BY t1.id HAVING v < 40",
			[]string{"1 1 10 11 2", "2 1 20 21 1", "3 2 30 31 0"}},
		{"ties", "SELECT id, g FROM t1 ORDER BY g FETCH FIRST 1 ROWS WITH TIES",
			[]string{"1 1", "2 1"}},
		{"isect", "SELECT g FROM t1 INTERSECT SELECT id FROM t2",
			[]string{"1", "2"}},
		{"exc", "SELECT id AS x, 1 AS one FROM t2 EXCEPT SELECT g, 1 FROM t1",
			[]string{"5 1"}},
		{"top2", "SELECT id, v FROM t1 ORDER BY v DESC LIMIT 2",
			[]string{"3 30", "4 40"}},
		{"top_offset", "SELECT id FROM t1 ORDER BY id LIMIT 2 OFFSET 1",
			[]string{"2", "3"}},
		{"union_all", "SELECT id FROM t1 UNION ALL SELECT id FROM t2",
			[]string{"1", "1", "1", "2", "2", "3", "4", "5"}},
		{"union_d", "SELECT id FROM t1 UNION SELECT id FROM t2",
			[]string{"1", "2", "3", "4", "5"}},
		{"union_chain", "SELECT id, 'a' AS src FROM t1 UNION ALL SELECT id, name FROM t2 UNION ALL SELECT k::int, label FROM t3",
			[]string{"1 a", "2 a", "3 a", "4 a", "1 a", "2 b", "5 e", "1 a2", "2 two", "7 seven"}},
		{"union_pair", "SELECT a.id FROM t1 a JOIN t1 b ON a.g = b.g UNION ALL SELECT id FROM t2",
			[]string{"1", "1", "2", "2", "3", "1", "2", "5", "1"}},
		{"union_all_d", "SELECT g FROM t1 UNION ALL SELECT id FROM t2 UNION SELECT k::int FROM t3",
			[]string{"1", "2", "5", "7", "NULL"}},
		{"union_d_all", "SELECT g FROM t1 UNION SELECT id FROM t2 UNION ALL SELECT k::int FROM t3",
			[]string{"1", "2", "5", "NULL", "2", "7"}},
		{"cte", "WITH big AS (SELECT * FROM t1 WHERE v >= 20) SELECT b.id, t2.name FROM big b JOIN t2 ON b.id = t2.id",
			[]string{"2 b"}},
		{"subq", "SELECT s.g, s.total FROM (SELECT g, sum(v) AS total FROM t1 GROUP BY g) s WHERE s.total > 30",
			[]string{"NULL 40"}},
		{"on_view", "SELECT name, count(*) AS n FROM inner_j GROUP BY name",
			[]string{"a 1", "a2 1", "b 1"}},
		{"distinct_g", "SELECT DISTINCT g FROM t1",
			[]string{"1", "2", "NULL"}},
		{"exprs", "SELECT id, CASE WHEN v > 15 THEN 'big' ELSE 'small' END AS size, coalesce(g, 0) * 2 AS g2 FROM t1 WHERE id IN (1, 2, 4)",
			[]string{"1 small 2", "2 big 2", "4 big 0"}},
		{"cast_key", "SELECT t1.id, t3.label FROM t1 JOIN t3 ON t1.id = t3.k",
			[]string{"2 two"}},
		{"consts", "SELECT 1 AS one, 'x' AS s",
			[]string{"1 x"}},
	}
}

func fixture(s *session) {
	s.exec("CREATE TABLE t1 (id int PRIMARY KEY, g int, v int)")
	s.exec("CREATE TABLE t2 (id int, name varchar)")
	s.exec("CREATE TABLE t3 (k bigint, label text, PRIMARY KEY (k))")
	s.exec("INSERT INTO t1 VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, NULL, 40)")
	s.exec("INSERT INTO t2 (name, id) VALUES ('a', 1), ('b', 2), ('e', 5), ('a2', 1)")
	s.exec("INSERT INTO t3 VALUES (2, 'two'), (7, 'seven')")
	if err := s.e.Flush(s.ctx); err != nil {
		s.t.Fatal(err)
	}
}

// TestViewsOverExistingData creates each view over loaded tables (they
// backfill), compares it with Postgres's answer and with the same query
// run as a batch, then changes the tables through SQL DML and checks that
// every view still equals its batch query.
func TestViewsOverExistingData(t *testing.T) {
	s := newSession(t)
	fixture(s)
	cases := viewCases()
	for _, c := range cases {
		s.exec("CREATE MATERIALIZED VIEW " + c.name + " AS " + c.query)
	}
	for _, c := range cases {
		if got, want := s.view(c.name), sorted(c.want...); !slices.Equal(got, want) {
			t.Errorf("view %s:\n got %q\nwant %q", c.name, got, want)
		}
		if got, want := s.query(c.query), sorted(c.want...); !slices.Equal(got, want) {
			t.Errorf("batch %s:\n got %q\nwant %q", c.name, got, want)
		}
	}
	s.exec("UPDATE t1 SET v = v + 1, g = 2 WHERE id = 1")
	s.exec("DELETE FROM t2 WHERE name = 'b'")
	s.exec("INSERT INTO t2 SELECT id + 10, 'n' || id FROM t1 WHERE id > 2")
	s.exec("INSERT INTO t2 VALUES (3, 'c'), (DEFAULT, 'nil')")
	s.exec("UPDATE t2 SET name = upper(name) WHERE id = 1")
	for _, c := range cases {
		if got, want := s.view(c.name), s.query(c.query); !slices.Equal(got, want) {
			t.Errorf("after DML, view %s:\n got %q\nwant %q", c.name, got, want)
		}
	}
}

// TestViewsBeforeData creates the views over empty tables, so every row
// arrives as a change.
func TestViewsBeforeData(t *testing.T) {
	s := newSession(t)
	s.exec("CREATE TABLE t1 (id int PRIMARY KEY, g int, v int)")
	s.exec("CREATE TABLE t2 (id int, name varchar)")
	s.exec("CREATE TABLE t3 (k bigint, label text, PRIMARY KEY (k))")
	cases := viewCases()
	for _, c := range cases {
		s.exec("CREATE MATERIALIZED VIEW " + c.name + " AS " + c.query)
	}
	s.exec("INSERT INTO t1 VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, NULL, 40)")
	s.exec("INSERT INTO t2 (name, id) VALUES ('a', 1), ('b', 2), ('e', 5), ('a2', 1)")
	s.exec("INSERT INTO t3 VALUES (2, 'two'), (7, 'seven')")
	for _, c := range cases {
		if got, want := s.view(c.name), sorted(c.want...); !slices.Equal(got, want) {
			t.Errorf("view %s:\n got %q\nwant %q", c.name, got, want)
		}
	}
}

func TestBatchQueries(t *testing.T) {
	s := newSession(t)
	fixture(s)
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT * FROM t1 WHERE v BETWEEN 15 AND 35", []string{"2 1 20", "3 2 30"}},
		{"SELECT id FROM t1 CROSS JOIN t3 WHERE t3.k = 7", []string{"1", "2", "3", "4"}},
		{"SELECT x FROM generate_series(1, 3) AS x", []string{"1", "2", "3"}},
		// The series ends at the type's edge instead of wrapping past it.
		{"SELECT x FROM generate_series(9223372036854775806::bigint, 9223372036854775807::bigint) AS x",
			[]string{"9223372036854775806", "9223372036854775807"}},
		{"SELECT x FROM generate_series(-9223372036854775807::bigint, -9223372036854775807::bigint - 1, -1) AS x",
			[]string{"-9223372036854775807", "-9223372036854775808"}},
		{"SELECT x FROM generate_series(9223372036854775800::bigint, 9223372036854775807::bigint, 5) AS x",
			[]string{"9223372036854775800", "9223372036854775805"}},
		{"VALUES (1, 'a'), (2, NULL)", []string{"1 a", "2 NULL"}},
		{"SELECT name FROM t2 WHERE name LIKE 'a%' AND id IS NOT DISTINCT FROM 1", []string{"a", "a2"}},
		{"SELECT nullif(g, 1) AS n FROM t1 WHERE id < 3", []string{"NULL", "NULL"}},
		{"SELECT id FROM t1 NATURAL JOIN t2", []string{"1", "1", "2"}},
		{"SELECT id, name FROM t1 JOIN t2 USING (id)", []string{"1 a", "1 a2", "2 b"}},
	}
	for _, c := range cases {
		if got, want := s.query(c.sql), sorted(c.want...); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, got, want)
		}
	}
}

func TestBatchOrdering(t *testing.T) {
	s := newSession(t)
	fixture(s)
	r, err := s.plan("SELECT id, v * 2 AS dv FROM t1 ORDER BY g DESC NULLS LAST, 2 LIMIT 3 OFFSET 1")
	if err != nil {
		t.Fatal(err)
	}
	q := r.(*Query)
	if q.Limit != 3 || q.Offset != 1 || len(q.OrderBy) != 2 || len(q.Columns) != 2 {
		t.Fatalf("ordering %+v, columns %v", q, q.Columns)
	}
	if q.OrderBy[0].Column < 2 || !q.OrderBy[0].Order.Desc || q.OrderBy[0].Order.NullsFirst {
		t.Errorf("first key %+v should be the hidden g, DESC NULLS LAST", q.OrderBy[0])
	}
	if q.OrderBy[1].Column != 1 || q.OrderBy[1].Order.Desc {
		t.Errorf("second key %+v should be column 2 ascending", q.OrderBy[1])
	}
	if names := []string{q.Columns[0].Name, q.Columns[1].Name}; strings.Join(names, ",") != "id,dv" {
		t.Errorf("columns %v", names)
	}
}

// TestInsertShortRow: without a column list, as in Postgres, fewer values
// than columns fill the leading columns and leave the rest NULL.
func TestInsertShortRow(t *testing.T) {
	s := newSession(t)
	s.exec("CREATE TABLE s (a int, b int, c varchar)")
	s.exec("INSERT INTO s VALUES (1, 2), (4, 5)")
	s.exec("INSERT INTO s SELECT 3")
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	want := sorted("1 2 NULL", "4 5 NULL", "3 NULL NULL")
	if got := s.query("SELECT * FROM s"); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestUpdateMultiAssign: SET (a, b) = (x, y) assigns each row item to its
// column, all computed from the old row.
func TestUpdateMultiAssign(t *testing.T) {
	s := newSession(t)
	s.exec("CREATE TABLE u (a int, b int, c varchar)")
	s.exec("INSERT INTO u VALUES (1, 2, 'x'), (10, 20, 'y')")
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.exec("UPDATE u SET (a, b) = (b + 5, a), c = c || c WHERE a = 1")
	if err := s.e.Flush(s.ctx); err != nil {
		t.Fatal(err)
	}
	want := sorted("7 1 xx", "10 20 y")
	if got := s.query("SELECT * FROM u"); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
