package session

import (
	"strings"
	"testing"
)

// TestPrimaryKeyLookups: conditions on leading primary-key columns read
// only those keys (EXPLAIN says so) and return exactly what the filter
// alone would, for SELECT, UPDATE and DELETE.
func TestPrimaryKeyLookups(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int, b varchar, v int, PRIMARY KEY (a, b))")
	exec(t, c, "INSERT INTO t SELECT g % 50, 'k' || (g / 50), g FROM generate_series(0, 999) g")
	cases := map[string]string{
		"SELECT v FROM t WHERE a = 7 AND b = 'k3' ORDER BY v":               "157",
		"SELECT count(*) FROM t WHERE a = 7":                                "20",
		"SELECT count(*) FROM t WHERE a IN (7, 8, 7) AND b IN ('k1', 'k2')": "4",
		"SELECT count(*) FROM t WHERE 7 = a AND v > 500":                    "10",
		"SELECT count(*) FROM t WHERE a = NULL":                             "0",
		"SELECT count(*) FROM t WHERE a IN (NULL, 3)":                       "20",
		"SELECT count(*) FROM t WHERE a = 7.5":                              "0",
		"SELECT count(*) FROM t WHERE a = 7 OR a = 8":                       "40",
		"SELECT count(*) FROM t WHERE b = 'k3'":                             "50",
		"SELECT count(*) FROM t WHERE a = 1000":                             "0",
		"SELECT count(*) FROM t WHERE a::bigint = 7":                        "20",
		"SELECT count(*) FROM t WHERE a = 3 + 4 AND b = 'k' || '3'":         "1",
	}
	for q, want := range cases {
		wantRows(t, c, q, want)
	}
	explain := func(q string) string { return strings.Join(queryStrings(t, c, "EXPLAIN "+q), "\n") }
	for q, want := range map[string]string{
		"SELECT * FROM t WHERE a = 7 AND b = 'k3'":             "pk lookup: 1 key on 2 of 2 key columns",
		"SELECT * FROM t WHERE a IN (1, 2, 2)":                 "pk lookup: 2 keys on 1 of 2 key columns",
		"UPDATE t SET v = 0 WHERE a = 7 AND b IN ('k1', 'k2')": "pk lookup: 2 keys on 2 of 2 key columns",
		"DELETE FROM t WHERE a = 7":                            "pk lookup: 1 key on 1 of 2 key columns",
	} {
		if got := explain(q); !strings.Contains(got, want) {
			t.Errorf("EXPLAIN %s:\n%s\nlacks %q", q, got, want)
		}
	}
	if got := explain("SELECT * FROM t WHERE b = 'k3'"); strings.Contains(got, "pk lookup") {
		t.Errorf("a condition on a non-leading key column became a lookup:\n%s", got)
	}
	wantTag(t, c, "UPDATE t SET v = -1 WHERE a = 7 AND b IN ('k1', 'k2', 'zz')", "UPDATE 2")
	wantTag(t, c, "DELETE FROM t WHERE a IN (7, 9) AND v = -1", "DELETE 2")
	wantRows(t, c, "SELECT count(*), sum(v) FROM t", "998 499336")
}
