package plan

import (
	"fmt"
	"slices"
)

// DistKind is how rows of a stream are spread over a fragment's actors.
type DistKind uint8

// Distribution kinds.
const (
	DistSome      DistKind = iota // spread, by no key we know
	DistSingleton                 // one actor
	DistHash                      // by hash of Keys over vnodes
)

// Dist is a stream's distribution.
type Dist struct {
	Kind DistKind
	Keys []int
}

// Upstream describes the fragment that materializes a table or view, for
// backfill edges.
type Upstream struct {
	Fragment    uint32
	Parallelism int
}

// FragmentOptions configures Fragmentize.
type FragmentOptions struct {
	Parallelism int
	// NextFragmentID allocates globally unique fragment ids.
	NextFragmentID func() uint32
	// Upstream finds the materializing fragment of a table read by a
	// Backfill node.
	Upstream func(tableID uint32) (Upstream, error)
}

// Fragmentize cuts a logical plan into fragments, inserting an exchange
// (a Merge node fed by a dispatcher) wherever a node needs its input
// distributed differently from how it arrives: joins and grouped
// aggregations by their keys, global aggregation and ungrouped top-N onto
// one actor, materialize by the table's distribution key. Sources that
// take barriers from the barrier manager (table source, values) always run
// in singleton fragments of their own under multi-input nodes, so that each
// actor has at most one barrier inbox. A node read by several others (see
// ShareCommon) heads a fragment of its own that dispatches to each of
// them. The plan is modified in place.
func Fragmentize(jobID uint32, root *Node, opts FragmentOptions) (*Job, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 1
	}
	f := &fragmenter{job: &Job{ID: jobID}, opts: opts, par: map[uint32]int{},
		parents: parentCounts(root), heads: map[*Node]*Fragment{}}
	top := f.newFragment()
	r, err := f.walk(root, top)
	if err != nil {
		return nil, err
	}
	top.Root = r
	f.finish()
	return f.job, nil
}

type fragmenter struct {
	job  *Job
	opts FragmentOptions
	// par holds a fragment's parallelism forced by a backfill edge.
	par map[uint32]int
	// parents counts the edges into each node; heads holds the fragment
	// each shared node (more than one) heads, once walked.
	parents map[*Node]int
	heads   map[*Node]*Fragment
}

func (f *fragmenter) newFragment() *Fragment {
	fr := &Fragment{ID: f.opts.NextFragmentID()}
	f.job.Fragments = append(f.job.Fragments, fr)
	return fr
}

func (f *fragmenter) shared(n *Node) bool { return f.parents[n] > 1 }

func (f *fragmenter) walk(n *Node, fr *Fragment) (*Node, error) {
	if n == nil {
		return nil, fmt.Errorf("plan: nil node")
	}
	if n.Kind == KindMerge {
		return nil, fmt.Errorf("plan: logical plans have no merge nodes")
	}
	for i, in := range n.Inputs {
		if in == nil {
			return nil, fmt.Errorf("plan: %s node: input %d is nil", n.Kind, i)
		}
		c, err := f.input(in, required(n, i), fr, len(n.Inputs) > 1)
		if err != nil {
			return nil, err
		}
		n.Inputs[i] = c
	}
	return n, f.noteLeaf(n, fr)
}

// input places in, an input of a node of fr needing it distributed as
// req, and returns what that node reads: in itself, walked into fr, or a
// Merge from another fragment.
func (f *fragmenter) input(in *Node, req Dist, fr *Fragment, multi bool) (*Node, error) {
	if f.shared(in) {
		return f.readShared(in, req, fr)
	}
	// Beside other inputs, one that must run on one actor (a global
	// aggregation) goes to a fragment of its own: inline, it would make
	// the whole fragment singleton, also for an input whose parallelism
	// is fixed (a backfill of a parallel table).
	alone := multi && req.Kind == DistSome && distOf(in).Kind == DistSingleton
	if !alone && !needsExchange(req, distOf(in)) && !(multi && hasBarrierSource(in, f.shared)) {
		return f.walk(in, fr)
	}
	if s, sreq, ok := f.chainToShared(in, req); ok {
		return f.walkChain(in, s, sreq, fr)
	}
	return f.exchange(in, req, fr)
}

// exchange puts in into a new fragment that dispatches to fr by req.
func (f *fragmenter) exchange(in *Node, req Dist, fr *Fragment) (*Node, error) {
	child := f.newFragment()
	r, err := f.walk(in, child)
	if err != nil {
		return nil, err
	}
	child.Root = r
	return f.connect(child, in, req, fr), nil
}

// readShared connects fr to the fragment the shared node s heads (made
// on its first reader), dispatched by req or, when the reader needs no
// particular distribution, by s's own.
func (f *fragmenter) readShared(s *Node, req Dist, fr *Fragment) (*Node, error) {
	head, ok := f.heads[s]
	if !ok {
		head = f.newFragment()
		f.heads[s] = head
		r, err := f.walk(s, head)
		if err != nil {
			return nil, err
		}
		head.Root = r
	}
	if req.Kind == DistSome {
		if d := distOf(s); d.Kind == DistHash {
			req = d
		}
	}
	return f.connect(head, s, req, fr), nil
}

// connect adds a dispatch from child, whose root puts out in's rows, to
// fr by req, and returns the Merge that reads it in fr.
func (f *fragmenter) connect(child *Fragment, in *Node, req Dist, fr *Fragment) *Node {
	var port uint32
	for _, d := range child.Outputs {
		if d.Downstream == fr.ID {
			port++
		}
	}
	d := Dispatch{Kind: DispatchHash, DistKey: req.Keys, Downstream: fr.ID, Port: port}
	switch req.Kind {
	case DistSingleton:
		d = Dispatch{Kind: DispatchSimple, Downstream: fr.ID, Port: port}
		fr.Singleton = true
	case DistSome:
		d = Dispatch{Kind: DispatchHash, DistKey: in.StreamKey, Downstream: fr.ID, Port: port}
	}
	child.Outputs = append(child.Outputs, d)
	return &Node{Kind: KindMerge, Schema: in.Schema, StreamKey: in.StreamKey, Watermarks: in.Watermarks,
		AppendOnly: in.AppendOnly, Merge: &Merge{UpstreamFragment: child.ID, Port: port}, dist: &req}
}

func (f *fragmenter) noteLeaf(n *Node, fr *Fragment) error {
	switch n.Kind {
	case KindTableSource, KindValues:
		fr.Singleton = true
	case KindSimpleAgg:
		fr.Singleton = true
	case KindTopN:
		if n.TopN != nil && len(n.TopN.GroupKeys) == 0 {
			fr.Singleton = true
		}
	case KindOverWindow:
		if n.OverWindow != nil && len(n.OverWindow.PartitionBy) == 0 {
			fr.Singleton = true
		}
	case KindBackfill:
		return f.noteBackfill(n, fr)
	case KindConnectorSource:
		return f.noteConnector(n, fr)
	}
	return nil
}

// noteConnector runs a connector source's fragment on one actor per
// split, at most the job's parallelism.
func (f *fragmenter) noteConnector(n *Node, fr *Fragment) error {
	if n.Connector == nil || n.Connector.Splits < 1 {
		return fmt.Errorf("plan: connector source without splits")
	}
	p := min(n.Connector.Splits, f.opts.Parallelism)
	if q, ok := f.par[fr.ID]; ok && q != p {
		return fmt.Errorf("plan: fragment %d has a connector source of parallelism %d and another input of %d", fr.ID, p, q)
	}
	f.par[fr.ID] = p
	return nil
}

func (f *fragmenter) noteBackfill(n *Node, fr *Fragment) error {
	if n.Backfill == nil || f.opts.Upstream == nil {
		return fmt.Errorf("plan: backfill node without upstream")
	}
	up, err := f.opts.Upstream(n.Backfill.Upstream.ID)
	if err != nil {
		return err
	}
	if p, ok := f.par[fr.ID]; ok && p != up.Parallelism {
		return fmt.Errorf("plan: fragment %d backfills upstreams of parallelism %d and %d", fr.ID, p, up.Parallelism)
	}
	f.par[fr.ID] = up.Parallelism
	var port uint32
	for _, e := range f.job.Upstreams {
		if e.UpstreamFragment == up.Fragment && e.Downstream == fr.ID {
			port++
		}
	}
	n.Inputs = []*Node{{Kind: KindMerge, Schema: n.Backfill.Upstream.Types, Merge: &Merge{UpstreamFragment: up.Fragment, Port: port}}}
	f.job.Upstreams = append(f.job.Upstreams, UpstreamEdge{
		TableID: n.Backfill.Upstream.ID, UpstreamFragment: up.Fragment, Downstream: fr.ID, Kind: DispatchNoShuffle, Port: port})
	return nil
}

func (f *fragmenter) finish() {
	for _, fr := range f.job.Fragments {
		switch p, ok := f.par[fr.ID]; {
		case fr.Singleton:
			fr.Parallelism = 1
		case ok:
			fr.Parallelism = p
		default:
			fr.Parallelism = f.opts.Parallelism
		}
	}
	// Dispatchers into a singleton fragment send everything to its one
	// actor.
	for _, fr := range f.job.Fragments {
		for i, d := range fr.Outputs {
			if down := f.job.Fragment(d.Downstream); down != nil && down.Singleton && d.Kind == DispatchHash {
				fr.Outputs[i] = Dispatch{Kind: DispatchSimple, Downstream: d.Downstream, Port: d.Port}
			}
		}
	}
}

// required returns the distribution node n needs on input i.
func required(n *Node, i int) Dist {
	switch n.Kind {
	case KindHashJoin:
		if n.HashJoin != nil {
			if i == 0 {
				return Dist{DistHash, n.HashJoin.LeftKeys}
			}
			return Dist{DistHash, n.HashJoin.RightKeys}
		}
	case KindHashAgg:
		if n.Agg != nil {
			return Dist{DistHash, n.Agg.GroupKeys}
		}
	case KindSimpleAgg:
		return Dist{Kind: DistSingleton}
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
	case KindTemporalFilter:
		if n.TemporalFilter != nil && len(n.TemporalFilter.Table.DistKey) > 0 {
			return Dist{DistHash, n.TemporalFilter.Table.DistKey}
		}
		return Dist{Kind: DistSingleton}
	case KindMaterialize:
		if n.Materialize != nil && len(n.Materialize.Table.DistKey) > 0 {
			return Dist{DistHash, n.Materialize.Table.DistKey}
		}
		return Dist{Kind: DistSingleton}
	case KindSink:
		// A key's changes reach one writer, in order, as they reach one
		// materialize; rows that are only inserted need no shuffle.
		if len(n.Inputs) == 1 && !n.Inputs[0].AppendOnly && len(n.StreamKey) > 0 {
			return Dist{DistHash, n.StreamKey}
		}
	}
	return Dist{Kind: DistSome}
}

func needsExchange(req, have Dist) bool {
	switch req.Kind {
	case DistSome:
		return false
	case DistSingleton:
		return have.Kind != DistSingleton
	}
	return have.Kind != DistHash || !slices.Equal(req.Keys, have.Keys)
}

// hasBarrierSource reports whether n's subtree holds a source taking
// barriers from the barrier manager, not looking below a node stop says
// becomes a Merge (nil: none).
func hasBarrierSource(n *Node, stop func(*Node) bool) bool {
	if n == nil {
		return false // a malformed tree; walk reports it
	}
	if stop != nil && stop(n) {
		return false
	}
	if n.Kind == KindTableSource || n.Kind == KindValues || n.Kind == KindConnectorSource {
		return true
	}
	if n.Kind == KindMerge || n.Kind == KindBackfill {
		return false
	}
	for _, in := range n.Inputs {
		if hasBarrierSource(in, stop) {
			return true
		}
	}
	return false
}
