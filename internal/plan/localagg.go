package plan

import (
	"slices"

	"github.com/sluice-db/sluice/internal/types"
)

// SplitLocalAggs gives a hash aggregation over an input that only inserts
// a stateless local aggregation below its exchange, as two-phase
// aggregation does in RisingWave and Flink: each chunk is aggregated by
// the group keys in the input's fragment, and only a row per group and
// chunk crosses the exchange. In Nexmark q5 a chunk of 1 024 bids becomes
// 5 120 windowed rows, half of them for one hot auction; the global
// aggregation then looks up and updates a group per partial row instead
// of per input row.
//
// It applies when every call is count, count(*), min or max, without
// DISTINCT, FILTER or ORDER BY (their partials combine: counts add up,
// extremes take the extreme), when the input only inserts (so no partial
// must retract), and when the input is not already distributed by the
// group keys (an exchange would follow anyway). An input that is a chain
// of projections and filters over a shared node, passing the group keys
// through as columns, is left alone: the shared node's fragment
// dispatches to the aggregation's by those columns, and a local
// aggregation would add an exchange. A chain that computes a group key
// (Nexmark q7's window end) runs in a fragment of its own whatever
// happens, so there the local aggregation shrinks the second exchange
// from a row per input row to a row per group and chunk. Run it after
// MarkAppendOnlyInputs; it derives the new nodes' watermarks itself.
func SplitLocalAggs(root *Node) {
	parents := parentCounts(root)
	eachOnce(root, func(n *Node) {
		if splittable(n, parents) {
			splitLocal(n)
			n.Inputs[0] = hopPanes(n.Inputs[0], parents)
		}
	})
}

func splittable(n *Node, parents map[*Node]int) bool {
	if n.Kind != KindHashAgg || n.Agg == nil || !n.Agg.AppendOnlyInput || len(n.Agg.GroupKeys) == 0 ||
		len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return false
	}
	for _, c := range n.Agg.Calls {
		if !combinable(c) {
			return false
		}
	}
	in := n.Inputs[0]
	if !needsExchange(required(n, 0), distOf(in)) {
		return false
	}
	return !keysReachShared(in, n.Agg.GroupKeys, parents)
}

// keysReachShared reports whether in is shared, or a chain of
// projections and filters over a shared node passing keys through as its
// columns: then the shared node dispatches straight to in's reader
// (fragmenter.chainToShared).
func keysReachShared(in *Node, keys []int, parents map[*Node]int) bool {
	shared := func(n *Node) bool { return parents[n] > 1 }
	if shared(in) {
		return true
	}
	_, _, ok := keysThroughChain(in, keys, shared)
	return ok
}

func combinable(c AggCall) bool {
	if c.Distinct || c.Filter != nil || len(c.OrderBy) > 0 {
		return false
	}
	switch c.Kind {
	case AggCount, AggCountStar:
		return c.Type == types.TInt64
	case AggMin, AggMax:
		return len(c.Args) == 1
	}
	return false
}

// splitLocal puts a local aggregation between n and its input, and makes
// n combine its partials: group keys first, then one partial per call.
func splitLocal(n *Node) {
	in, a := n.Inputs[0], n.Agg
	k := len(a.GroupKeys)
	local := &Agg{GroupKeys: slices.Clone(a.GroupKeys)}
	schema := make([]types.Type, 0, k+len(a.Calls))
	for _, g := range a.GroupKeys {
		schema = append(schema, in.Schema[g])
	}
	calls := make([]AggCall, len(a.Calls))
	for i, c := range a.Calls {
		local.Calls = append(local.Calls, AggCall{Kind: c.Kind, Args: slices.Clone(c.Args), Type: c.Type})
		schema = append(schema, c.Type)
		kind := c.Kind
		if kind == AggCount || kind == AggCountStar {
			kind = AggSumCounts
		}
		calls[i] = AggCall{Kind: kind, Args: []int{k + i}, Type: c.Type, Table: c.Table}
	}
	// Two chunks can give equal partial rows, so no columns identify a
	// row; the stream only inserts, so nothing refers to one either. The
	// stream key names them all, and only the aggregation above reads
	// the node, by its group keys.
	ln := &Node{Kind: KindLocalAgg, Inputs: []*Node{in}, Schema: schema,
		StreamKey: seq(len(schema)), AppendOnly: true, LocalAgg: local}
	ln.Watermarks = outputWatermarks(ln)
	n.Inputs[0] = ln
	a.GroupKeys, a.Calls = seq(k), calls
}
