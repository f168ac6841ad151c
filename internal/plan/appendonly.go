package plan

// MarkAppendOnlyInputs tells aggregations and top-Ns whose input only
// inserts (DeriveStreamProps has run) that no retraction will come, so
// they need not keep what only a retraction could bring back. An
// aggregation (Agg.AppendOnlyInput) drops its min and max calls' value
// tables: a min or max is exactly the extreme seen so far, and keeping
// every value cost Nexmark q7 a write per bid. A top-N
// (TopN.AppendOnlyInput) stores only the rows it may still emit. A hash
// join (HashJoin.LeftAppendOnly, RightAppendOnly) stores such a side's
// rows as keys new to its table. Run it before state tables get ids.
func MarkAppendOnlyInputs(root *Node) {
	eachOnce(root, func(n *Node) {
		if n.HashJoin != nil && len(n.Inputs) == 2 && n.Inputs[0] != nil && n.Inputs[1] != nil {
			n.HashJoin.LeftAppendOnly, n.HashJoin.RightAppendOnly = n.Inputs[0].AppendOnly, n.Inputs[1].AppendOnly
			return
		}
		if len(n.Inputs) != 1 || n.Inputs[0] == nil || !n.Inputs[0].AppendOnly {
			return
		}
		if n.TopN != nil {
			n.TopN.AppendOnlyInput = true
		}
		if n.Agg == nil {
			return
		}
		n.Agg.AppendOnlyInput = true
		for i := range n.Agg.Calls {
			if c := &n.Agg.Calls[i]; c.Kind == AggMin || c.Kind == AggMax {
				c.Table = nil
			}
		}
	})
}
