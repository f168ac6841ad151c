package parser

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestSourceClauses(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		source bool
		with   []Option
		format string
	}{
		{"CREATE SOURCE bid (auction BIGINT) WITH (connector = 'nexmark', nexmark.table.type = 'Bid') FORMAT PLAIN ENCODE JSON",
			true, []Option{{"connector", "nexmark", 41}, {"nexmark.table.type", "Bid", 64}}, "PLAIN/JSON"},
		{"create table t (a int) append only with (Fields.A.kind='it''s', fields.a.start=-5, x)",
			false, []Option{{"fields.a.kind", "it's", 41}, {"fields.a.start", "-5", 64}, {"x", "", 83}}, "/"},
		{"CREATE TABLE t (a int) WITH (oids = false)", false, []Option{{"oids", "false", 29}}, "/"},
		{"CREATE TABLE t AS SELECT 1 AS a", false, nil, "/"},
		{"DROP SOURCE IF EXISTS bid CASCADE", true, nil, "/"},
	} {
		sts, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		st := sts[0]
		if st.Node == nil || st.Source != tc.source || !slices.Equal(st.With, tc.with) || st.Format+"/"+st.Encode != tc.format {
			t.Errorf("%s: source %v with %+v format %s/%s node %v", tc.sql, st.Source, st.With, st.Format, st.Encode, st.Node)
		}
	}
	for _, sql := range []string{"CREATE SOURCE s (a int) WITH (connector = )", "CREATE SOURCE s (a int) WITH (connector 'x')",
		"CREATE SOURCE s (a int) FORMAT PLAIN", "CREATE SOURCE s (a int) WITH (a.b.)"} {
		if _, err := Parse(sql); sqlerr.CodeOf(err) != sqlerr.SyntaxError {
			t.Errorf("%s: %v, want a syntax error", sql, err)
		}
	}
	sts, err := Parse("SHOW SOURCES")
	if err != nil || sts[0].Kind != KindShowSources {
		t.Fatalf("SHOW SOURCES: %+v %v", sts, err)
	}
}
