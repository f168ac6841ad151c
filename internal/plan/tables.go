package plan

import "slices"

// StateTables returns the ids of every state table the job's executors
// use, so that a drop can delete them all.
func (j *Job) StateTables() []uint32 {
	var ids []uint32
	add := func(t *Table) {
		if t != nil && t.ID != 0 {
			ids = append(ids, t.ID)
		}
	}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		for _, t := range n.Tables() {
			add(t)
		}
		for _, in := range n.Inputs {
			walk(in)
		}
	}
	for _, f := range j.Fragments {
		walk(f.Root)
	}
	return ids
}

// Tables returns the state tables of one node (some may be nil: a join's
// degree tables). It is the one list of which node keeps which table:
// the planner gives them ids from it, a drop deletes them by it.
func (n *Node) Tables() []*Table {
	switch {
	case n.TableSource != nil:
		return []*Table{&n.TableSource.OffsetTable}
	case n.Connector != nil:
		return []*Table{&n.Connector.OffsetTable}
	case n.HashJoin != nil:
		hj := n.HashJoin
		return []*Table{&hj.LeftTable, &hj.RightTable, hj.LeftDegreeTable, hj.RightDegreeTable, hj.PendingTable}
	case n.Agg != nil:
		ts := []*Table{&n.Agg.ResultTable}
		for i := range n.Agg.Calls {
			ts = append(ts, n.Agg.Calls[i].Table)
		}
		return ts
	case n.TopN != nil:
		return []*Table{&n.TopN.Table}
	case n.OverWindow != nil:
		return []*Table{&n.OverWindow.Table}
	case n.Distinct != nil:
		return []*Table{&n.Distinct.Table}
	case n.Materialize != nil:
		return []*Table{&n.Materialize.Table}
	case n.Backfill != nil:
		return []*Table{&n.Backfill.ProgressTable, n.Backfill.GateTable}
	case n.Merge != nil:
		return []*Table{n.Merge.GateTable}
	case n.Values != nil:
		return []*Table{n.Values.Table}
	case n.WatermarkFilter != nil:
		return []*Table{&n.WatermarkFilter.Table}
	case n.TemporalFilter != nil:
		return []*Table{&n.TemporalFilter.Table}
	}
	return nil
}

// HasBarrierSource reports whether the fragment's actors take barriers
// from the barrier manager directly (table source or values).
func (f *Fragment) HasBarrierSource() bool { return hasBarrierSource(f.Root, nil) }

// ScannedTables returns the ids of the upstream tables a batch plan's scan
// leaves read, each once.
func ScannedTables(n *Node) []uint32 {
	var ids []uint32
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		if n.Kind == KindBackfill && n.Backfill != nil && !slices.Contains(ids, n.Backfill.Upstream.ID) {
			ids = append(ids, n.Backfill.Upstream.ID)
		}
		for _, in := range n.Inputs {
			walk(in)
		}
	}
	walk(n)
	return ids
}
