package refeval

import (
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestAggregatesMatchPostgres checks the oracle's avg, string_agg and
// array_agg against results Postgres gives for the same rows.
func TestAggregatesMatchPostgres(t *testing.T) {
	in := []types.Type{types.TInt64, types.TVarchar, types.TVarchar}
	// (n, s, delimiter)
	rows := []types.Row{{int64(1), "b", "-"}, {int64(2), "a", "+"}, {nil, "c", nil}, {int64(2), nil, "!"}}
	asc := []plan.ColumnOrder{{Column: 1}}
	desc := []plan.ColumnOrder{{Column: 1, Order: codec.Order{Desc: true, NullsFirst: true}}}
	cases := []struct {
		name string
		call plan.AggCall
		want string
	}{
		// SELECT avg(n) FROM (VALUES (1),(2),(NULL),(2)) v(n)
		{"avg int", plan.AggCall{Kind: plan.AggAvg, Args: []int{0}, Type: types.TDecimal}, "1.6666666666666667"},
		{"avg distinct", plan.AggCall{Kind: plan.AggAvg, Args: []int{0}, Type: types.TDecimal, Distinct: true}, "1.5000000000000000"},
		// string_agg(s, d ORDER BY s DESC): NULL s first (skipped), each
		// later value preceded by its own delimiter, a NULL one by nothing.
		{"string_agg desc", plan.AggCall{Kind: plan.AggStringAgg, Args: []int{1, 2}, Type: types.TVarchar, OrderBy: desc}, "c-b+a"},
		// string_agg(s, d ORDER BY s): c's NULL delimiter adds nothing.
		{"string_agg asc", plan.AggCall{Kind: plan.AggStringAgg, Args: []int{1, 2}, Type: types.TVarchar, OrderBy: asc}, "a-bc"},
		{"array_agg order", plan.AggCall{Kind: plan.AggArrayAgg, Args: []int{1}, Type: types.ArrayOf(types.TVarchar), OrderBy: desc}, "{NULL,c,b,a}"},
	}
	n := &plan.Node{Kind: plan.KindSimpleAgg, Inputs: []*plan.Node{{Schema: in}}}
	for _, c := range cases {
		n.Agg = &plan.Agg{Calls: []plan.AggCall{c.call}}
		out, err := aggregate(n, rows)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := types.FormatDatum(out[0][0], c.call.Type); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
}
