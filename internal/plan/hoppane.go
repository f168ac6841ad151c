package plan

import (
	"github.com/sluice-db/sluice/internal/expr"
)

// Panes of a hopping window. A row's time t falls in size/slide windows,
// and every t of one pane (the slide-wide bin of t, date_bin(slide, t,
// grid), HopWindow.PaneOf) falls in the same ones. So a local aggregation grouped by a
// window's start or end, over a HOP, can aggregate by the pane instead and
// expand each partial to its windows afterwards: the same partial rows
// come out, but the aggregation hashes each input row once rather than
// once per window, and only the partials are copied per window. This is
// the slicing that Flink's window aggregation and the "panes" of Li et al.
// (SIGMOD Record 2005) do. In Nexmark q5 (a 10 s window every 2 s) the
// local aggregation and the window's expansion were 12 % of the CPU.
//
//	LocalAgg{keys} ← [Project of columns] ← HopWindow{t} ← X
//
// becomes
//
//	Project{the old columns} ← HopWindow{pane} ← LocalAgg{pane, keys'} ← Project{date_bin(slide, t, origin), columns} ← X
//
// It applies when a group key is the window's start or end, and neither
// the other keys nor the calls' arguments read one (they are X's
// columns). A pane's start is a time the window expands like any other:
// the windows of date_bin(slide, t) are those of t, its infinities are
// still in no window, and its watermark implies the same window
// watermarks as t's.

// hopPanes returns the node that replaces the local aggregation ln: the
// pane rewrite of it, or ln itself when it does not apply. parents counts
// each node's parents in the plan before ln was made.
func hopPanes(ln *Node, parents map[*Node]int) *Node {
	hop, through, ok := hopUnder(ln, parents)
	if !ok {
		return ln
	}
	x := hop.Inputs[0]
	w := len(x.Schema)
	a := ln.LocalAgg
	keys := make([]int, len(a.GroupKeys)) // X column, or w / w+1 for start / end
	window := false
	for j, k := range a.GroupKeys {
		keys[j] = through[k]
		window = window || keys[j] >= w
	}
	args := make([][]int, len(a.Calls)) // each call's arguments, as X columns
	for i, c := range a.Calls {
		for _, arg := range c.Args {
			if through[arg] >= w {
				return ln
			}
			args[i] = append(args[i], through[arg])
		}
	}
	if !window || hop.HopWindow.Size == hop.HopWindow.Slide { // one window per row: nothing to save
		return ln
	}
	return paneNodes(ln, hop, keys, args)
}

// hopUnder finds the hop window under ln, through at most one projection
// of columns, neither of them read by any other node; through maps each
// of ln's input columns to the hop window's column it is.
func hopUnder(ln *Node, parents map[*Node]int) (*Node, []int, bool) {
	in := ln.Inputs[0]
	if parents[in] > 1 {
		return nil, nil, false
	}
	if in.Kind == KindHopWindow {
		return in, seq(len(in.Schema)), true
	}
	if in.Kind != KindProject || len(in.Inputs) != 1 || in.Inputs[0].Kind != KindHopWindow || parents[in.Inputs[0]] > 1 {
		return nil, nil, false
	}
	through := make([]int, len(in.Project.Exprs))
	for i, d := range in.Project.Exprs {
		if d.Kind != expr.KindInput {
			return nil, nil, false
		}
		through[i] = d.Index
	}
	return in.Inputs[0], through, true
}

// paneNodes builds the rewrite of ln over hop, whose group keys are keys
// (columns of hop's input, or w and w+1 for its window start and end) and
// whose calls' arguments are args (columns of hop's input).
func paneNodes(ln, hop *Node, keys []int, args [][]int) *Node {
	x, h, a := hop.Inputs[0], hop.HopWindow, ln.LocalAgg
	w, tt := len(x.Schema), x.Schema[h.TimeCol]
	exprs := []expr.Desc{BinStart(h.TimeCol, tt, h.Slide, h.Grid())}
	col := map[int]int{} // X column → its column in the pane projection
	use := func(c int) int {
		if i, ok := col[c]; ok {
			return i
		}
		col[c] = len(exprs)
		exprs = append(exprs, expr.Input(c, x.Schema[c]))
		return col[c]
	}
	local := &Agg{GroupKeys: []int{0}}
	for _, k := range keys {
		if k < w {
			local.GroupKeys = append(local.GroupKeys, use(k))
		}
	}
	for i, c := range a.Calls {
		in := make([]int, len(args[i]))
		for j, arg := range args[i] {
			in[j] = use(arg)
		}
		local.Calls = append(local.Calls, AggCall{Kind: c.Kind, Args: in, Type: c.Type})
	}
	p := derived(&Node{Kind: KindProject, Inputs: []*Node{x}, Project: &Project{Exprs: exprs}})
	l := derived(&Node{Kind: KindLocalAgg, Inputs: []*Node{p}, LocalAgg: local})
	ph := derived(&Node{Kind: KindHopWindow, Inputs: []*Node{l}, HopWindow: &HopWindow{TimeCol: 0, Slide: h.Slide,
		Size: h.Size, Origin: h.Origin}})
	return derived(&Node{Kind: KindProject, Inputs: []*Node{ph}, Project: &Project{Exprs: paneOutput(ln, ph, keys, w)}})
}

// paneOutput selects ln's columns from the pane hop window ph: each group
// key (the window's start or end, or the key the pane aggregation kept),
// then the partials.
func paneOutput(ln, ph *Node, keys []int, w int) []expr.Desc {
	wl := len(ph.Schema) - 2 // ph's window start
	out := make([]expr.Desc, 0, len(ln.Schema))
	kept := 1
	for j, k := range keys {
		src := kept
		switch {
		case k == w:
			src = wl
		case k == w+1:
			src = wl + 1
		default:
			kept++
		}
		out = append(out, expr.Input(src, ln.Schema[j]))
	}
	for i := range ln.LocalAgg.Calls {
		out = append(out, expr.Input(kept+i, ln.Schema[len(keys)+i]))
	}
	return out
}

// derived fills n's schema (from its kind and input), marks it
// append-only and derives its watermarks; n's input only inserts. As for
// the local aggregation itself, no columns identify a row (two chunks can
// give equal partials), so the stream key names them all; only the
// aggregation above reads the rows, by its group keys.
func derived(n *Node) *Node {
	in := n.Inputs[0].Schema
	switch n.Kind {
	case KindProject:
		for _, d := range n.Project.Exprs {
			n.Schema = append(n.Schema, d.Type)
		}
	case KindLocalAgg:
		for _, k := range n.LocalAgg.GroupKeys {
			n.Schema = append(n.Schema, in[k])
		}
		for _, c := range n.LocalAgg.Calls {
			n.Schema = append(n.Schema, c.Type)
		}
	case KindHopWindow:
		t := in[n.HopWindow.TimeCol]
		n.Schema = append(append(n.Schema, in...), t, t)
	}
	n.AppendOnly = true
	n.StreamKey = seq(len(n.Schema))
	n.Watermarks = outputWatermarks(n)
	return n
}
