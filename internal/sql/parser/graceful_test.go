package parser

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestGracefulDrop(t *testing.T) {
	cases := []struct {
		sql      string
		graceful bool
		names    int
		cascade  bool
	}{
		{"DROP MATERIALIZED VIEW mv GRACEFUL", true, 1, false},
		{"drop materialized view if exists a, b cascade graceful;", true, 2, true},
		{"DROP MATERIALIZED VIEW mv", false, 1, false},
		// A relation named graceful is a name, not the option.
		{"DROP MATERIALIZED VIEW graceful", false, 1, false},
		{`DROP MATERIALIZED VIEW mv "graceful"`, false, 0, false},
	}
	for _, c := range cases {
		sts, err := Parse(c.sql)
		if c.names == 0 {
			if sqlerr.CodeOf(err) != sqlerr.SyntaxError {
				t.Errorf("%s: got %v, want a syntax error", c.sql, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		st := sts[0]
		drop, ok := st.Node.Node.(*pg_query.Node_DropStmt)
		if !ok {
			t.Fatalf("%s: got %T", c.sql, st.Node.Node)
		}
		cascade := drop.DropStmt.Behavior == pg_query.DropBehavior_DROP_CASCADE
		if st.Graceful != c.graceful || len(drop.DropStmt.Objects) != c.names || cascade != c.cascade {
			t.Errorf("%s: graceful=%t names=%d cascade=%t", c.sql, st.Graceful, len(drop.DropStmt.Objects), cascade)
		}
	}
	// Only views have the graceful form.
	if _, err := Parse("DROP TABLE t GRACEFUL"); sqlerr.CodeOf(err) != sqlerr.SyntaxError {
		t.Errorf("DROP TABLE … GRACEFUL: got %v, want a syntax error", err)
	}
}
