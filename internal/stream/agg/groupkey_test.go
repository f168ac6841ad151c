package agg

import (
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestGroupKeyEqualSpellingsShareAGroup: values the result table's key
// cannot tell apart (numeric 1.0 and 1.00, float 0 and -0, interval
// '1 day' and '24 hours') are one group, even though their value
// encodings differ; keys of exact types group by value. Run with a cache
// of 1 as well, so the second spelling is found through the table.
func TestGroupKeyEqualSpellingsShareAGroup(t *testing.T) {
	cases := []struct {
		name   string
		in     []types.Type
		script string
	}{
		{"numeric scale", tsch(dec, i64), "+ 1.0 1\n+ 1.00 1\n+ 1 1"},
		{"float zero sign", tsch(f64, i64), "+ 0 1\n+ -0 1\n+ 0 1"},
		{"interval", tsch(types.TInterval, i64), "+ '1 day' 1\n+ '24 hours' 1\n+ '1 day' 1"},
		{"exact types", tsch(i64, i64), "+ 7 1\n+ 7 1\n+ 7 1"},
	}
	for _, tc := range cases {
		for _, cache := range []int{1, 1000} {
			for _, split := range []bool{false, true} {
				t.Run(tc.name+"/cache="+itoa(cache)+map[bool]string{true: "/split"}[split], func(t *testing.T) {
					rows := tc.script
					if split { // one row per epoch: later rows load the group
						rows = strings.ReplaceAll(rows, "\n", "\nbarrier\n")
					}
					st := streamtest.OpenStore(t)
					node := planAgg(tc.in, []int{0}, []plan.AggCall{ac(plan.AggCountStar, i64)}, 1)
					src := stream.NewMockSource(tc.in, script(tc.in, "barrier\n"+rows+"\nstop", 1)...)
					a, err := NewAgg(testEnv(st, cache), src, node)
					if err != nil {
						t.Fatal(err)
					}
					out := drain(t, a)
					lines := strings.Split(strings.TrimSpace(out), "\n")
					last, inserts := "", 0
					for _, l := range lines {
						if l != "barrier" {
							last = l
						}
						if strings.HasPrefix(l, "+ ") {
							inserts++
						}
					}
					if inserts != 1 {
						t.Fatalf("%d groups appeared, want 1:\n%s", inserts, out)
					}
					if !strings.HasSuffix(last, " 3") {
						t.Fatalf("the group's count is not 3:\n%s", out)
					}
				})
			}
		}
	}
}
