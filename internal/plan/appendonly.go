package plan

// MarkAppendOnlyAggs sets Agg.AppendOnlyInput on every aggregation whose
// input only inserts (DeriveStreamProps has run) and drops its min and
// max calls' value tables: with no deletes, a min or max is exactly the
// extreme seen so far, and keeping every value to survive a retraction
// that cannot come cost Nexmark q7 a write per bid. Run it before state
// tables get ids.
func MarkAppendOnlyAggs(root *Node) {
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, in := range n.Inputs {
			walk(in)
		}
		if n.Agg == nil || len(n.Inputs) != 1 || n.Inputs[0] == nil || !n.Inputs[0].AppendOnly {
			return
		}
		n.Agg.AppendOnlyInput = true
		for i := range n.Agg.Calls {
			if c := &n.Agg.Calls[i]; c.Kind == AggMin || c.Kind == AggMax {
				c.Table = nil
			}
		}
	}
	walk(root)
}
