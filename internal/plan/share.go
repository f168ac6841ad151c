package plan

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/expr"
)

// A query often computes one stream twice: Nexmark q5 counts bids per
// auction and hopping window once for the rows it returns and again for
// the maximum it compares them with, and q7 reads the bid source on both
// sides of its join. ShareCommon makes such repeated subtrees one node
// that both consumers read, so the work (and its state) is done once:
// the plan becomes a DAG, and Fragmentize gives each shared node a
// fragment of its own that dispatches to every consumer.
//
// Two subtrees are the same when every node matches field by field (as
// plans cross the network as JSON, their JSON is the comparison) and the
// inputs match in order. Only subtrees holding a connector source or a
// stateful executor are shared (see sharedKind): duplicating a projection
// of a table costs less than the exchange sharing it would add.
// Expressions in streaming jobs are deterministic per row (random()
// hashes its row), so a shared subtree computes what each copy would
// have.
//
// Run it after every rewrite that assumes a tree (NullUnread) and before
// state tables get ids, so that a shared node's tables are numbered once.

// ShareCommon rewrites the plan under root so that equal subtrees worth
// sharing are one node, and returns how many nodes are now read by more
// than one other.
func ShareCommon(root *Node) int {
	s := &sharer{class: map[*Node]int{}, byKey: map[string]int{}}
	s.visit(root)
	shared := 0
	for _, c := range parentCounts(root) {
		if c > 1 {
			shared++
		}
	}
	return shared
}

type sharer struct {
	// class is each visited node's equivalence class; byKey finds a class
	// by its key, reps[c] is the class's first node and worth[c] whether
	// its subtree is worth sharing.
	class map[*Node]int
	byKey map[string]int
	reps  []*Node
	worth []bool
}

// visit classifies n's subtree, inputs first, and replaces each input
// worth sharing by its class's first node.
func (s *sharer) visit(n *Node) int {
	if c, ok := s.class[n]; ok {
		return c
	}
	var key strings.Builder
	worth := sharedKind(n.Kind)
	for i, in := range n.Inputs {
		if in == nil {
			key.WriteString("nil,")
			continue
		}
		c := s.visit(in)
		if s.worth[c] {
			n.Inputs[i] = s.reps[c]
			worth = true
		}
		key.WriteString(strconv.Itoa(c))
		key.WriteByte(',')
	}
	k := s.ownKey(n, key.String())
	c, ok := s.byKey[k]
	if !ok {
		c = len(s.reps)
		s.reps = append(s.reps, n)
		s.worth = append(s.worth, worth)
		s.byKey[k] = c
	}
	s.class[n] = c
	return c
}

// ownKey is n's fields but its inputs, then its inputs' classes. A node
// that cannot be encoded gets a key of its own (never shared).
func (s *sharer) ownKey(n *Node, inputs string) string {
	own := *n
	own.Inputs = nil
	b, err := json.Marshal(&own)
	if err != nil {
		return "unencodable:" + strconv.Itoa(len(s.reps))
	}
	return string(b) + "|" + inputs
}

// sharedKind: connector sources and the stateful executors, whose work
// is worth an exchange. A backfill alone is not: its snapshot is read once
// per job anyway, and a self-join on the table's key reads both sides
// locally where a shared backfill would send them through an exchange.
func sharedKind(k Kind) bool {
	switch k {
	case KindConnectorSource, KindHashAgg, KindSimpleAgg, KindHashJoin, KindTopN,
		KindOverWindow, KindDistinct, KindTemporalFilter:
		return true
	}
	return false
}

// parentCounts counts the edges into each node of the DAG under root; a
// node with more than one is shared.
func parentCounts(root *Node) map[*Node]int {
	counts := map[*Node]int{}
	eachOnce(root, func(n *Node) {
		for _, in := range n.Inputs {
			if in != nil {
				counts[in]++
			}
		}
	})
	return counts
}

// eachOnce calls f on every node of the plan under root, a shared node
// once, inputs before the nodes reading them.
func eachOnce(root *Node, f func(n *Node)) {
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
		f(n)
	}
	walk(root)
}

// chainToShared follows in down through projections and filters, read
// by no one else, to a shared node, and maps req (what in's reader
// needs) onto that node's columns. Then the shared node's fragment can
// dispatch straight to the reader's, the chain running there, instead of
// through a fragment of the chain's own.
func (f *fragmenter) chainToShared(in *Node, req Dist) (*Node, Dist, bool) {
	if req.Kind == DistSome {
		return nil, req, false
	}
	s, keys, ok := keysThroughChain(in, req.Keys, f.shared)
	if !ok {
		return nil, req, false
	}
	return s, Dist{Kind: req.Kind, Keys: keys}, true
}

// keysThroughChain follows n down through projections and filters to the
// first node below it that shared reports (n itself is not looked at),
// mapping keys (columns of n's output) onto that node's columns. ok is
// false when the chain holds another kind of node, or a projection
// computes a key rather than passing a column through.
func keysThroughChain(n *Node, keys []int, shared func(*Node) bool) (*Node, []int, bool) {
	keys = append([]int(nil), keys...)
	for {
		if len(n.Inputs) != 1 || n.Inputs[0] == nil {
			return nil, nil, false
		}
		switch {
		case n.Kind == KindFilter:
		case n.Kind == KindProject && n.Project != nil:
			for i, k := range keys {
				if k < 0 || k >= len(n.Project.Exprs) || n.Project.Exprs[k].Kind != expr.KindInput {
					return nil, nil, false
				}
				keys[i] = n.Project.Exprs[k].Index
			}
		default:
			return nil, nil, false
		}
		n = n.Inputs[0]
		if shared(n) {
			return n, keys, true
		}
	}
}

// walkChain walks the chain from in down to the shared node s (see
// chainToShared) into fr, reading s dispatched by sreq.
func (f *fragmenter) walkChain(in, s *Node, sreq Dist, fr *Fragment) (*Node, error) {
	for n := in; ; n = n.Inputs[0] {
		if n.Inputs[0] == s {
			m, err := f.readShared(s, sreq, fr)
			if err != nil {
				return nil, err
			}
			n.Inputs[0] = m
			return in, nil
		}
	}
}
