package plan

import "github.com/sluice-db/sluice/internal/expr"

// distOf returns how n's output is distributed, given that its inputs
// arrive as they are (before any exchange is inserted above n).
func distOf(n *Node) Dist {
	if n.dist != nil {
		return *n.dist
	}
	switch n.Kind {
	case KindTableSource, KindValues, KindSimpleAgg:
		return Dist{Kind: DistSingleton}
	case KindBackfill:
		return backfillDist(n)
	case KindProject:
		return projectDist(n)
	case KindFilter, KindWatermarkFilter, KindTemporalFilter:
		return inputDist(n, 0)
	case KindHashJoin:
		return joinDist(n)
	case KindHashAgg:
		if n.Agg != nil {
			return Dist{DistHash, seq(len(n.Agg.GroupKeys))}
		}
	case KindDistinct:
		if n.Distinct != nil {
			return Dist{DistHash, n.Distinct.Keys}
		}
	case KindTopN:
		if n.TopN != nil && len(n.TopN.GroupKeys) > 0 {
			return Dist{DistHash, n.TopN.GroupKeys}
		}
		return Dist{Kind: DistSingleton}
	case KindOverWindow:
		if n.OverWindow != nil && len(n.OverWindow.PartitionBy) > 0 {
			return Dist{DistHash, n.OverWindow.PartitionBy}
		}
		return Dist{Kind: DistSingleton}
	case KindMaterialize:
		return required(n, 0)
	}
	return Dist{Kind: DistSome}
}

func inputDist(n *Node, i int) Dist {
	if i < len(n.Inputs) && n.Inputs[i] != nil {
		return distOf(n.Inputs[i])
	}
	return Dist{Kind: DistSome}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// remap maps keys through a column mapping (old column → new position);
// the result is DistSome if a key column is not kept.
func remap(d Dist, pos map[int]int) Dist {
	if d.Kind != DistHash {
		return d
	}
	keys := make([]int, len(d.Keys))
	for i, k := range d.Keys {
		p, ok := pos[k]
		if !ok {
			return Dist{Kind: DistSome}
		}
		keys[i] = p
	}
	return Dist{DistHash, keys}
}

func backfillDist(n *Node) Dist {
	b := n.Backfill
	if b == nil || len(b.Upstream.DistKey) == 0 {
		return Dist{Kind: DistSome}
	}
	pos := map[int]int{}
	for i, c := range b.Columns {
		if _, ok := pos[c]; !ok {
			pos[c] = i
		}
	}
	return remap(Dist{DistHash, b.Upstream.DistKey}, pos)
}

func projectDist(n *Node) Dist {
	in := inputDist(n, 0)
	if n.Project == nil || in.Kind != DistHash {
		return in
	}
	pos := map[int]int{}
	for i, e := range n.Project.Exprs {
		if e.Kind == expr.KindInput {
			if _, ok := pos[e.Index]; !ok {
				pos[e.Index] = i
			}
		}
	}
	return remap(in, pos)
}

// joinDist: after the exchange the join's output is hashed by the left
// keys, wherever Output keeps them.
func joinDist(n *Node) Dist {
	j := n.HashJoin
	if j == nil {
		return Dist{Kind: DistSome}
	}
	pos := map[int]int{}
	for i, c := range j.Output {
		if _, ok := pos[c]; !ok {
			pos[c] = i
		}
	}
	return remap(Dist{DistHash, j.LeftKeys}, pos)
}
