//go:build unix

package engine

import (
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestReferenceStallFedBySource is the reference stall with a Nexmark
// source feeding the stuck join: every bid joins all stallRows rows of t
// (k = 1 on both sides), and the source keeps bids coming as fast as the
// join takes them. A source job is paused, throttled and dropped through
// the control channel like any other, at once, while its barrier is
// stuck, and nothing of it is left.
func TestReferenceStallFedBySource(t *testing.T) {
	s := newStall(t)
	bid, err := s.e.CreateSource(s.ctx, SourceSpec{Name: "bid", Columns: []catalog.Column{
		{Name: "auction", Type: types.TInt64}, {Name: "price", Type: types.TInt64}},
		Connector: connector.Spec{Connector: "nexmark", Columns: []connector.Column{
			{Name: "auction", Type: types.TInt64}, {Name: "price", Type: types.TInt64}},
			// Unpaced: chunks of many bids, each joining every row of t,
			// so the queue ahead of a barrier holds minutes of work. At
			// the default pace of 10 000 events a second the chunks hold
			// a few bids, and under the race detector a barrier sometimes
			// crawled through instead of sticking.
			Options: map[string]string{"nexmark.table.type": "Bid", "nexmark.split.num": "2",
				"nexmark.min.event.gap.in.ns": "0"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.baseline()
	s.insert(1, stallRows)
	amp := s.sourceAmp(bid)
	at := s.stuck()
	if jobGoroutines(amp.ID) == 0 {
		t.Fatal("no goroutine carries amp's label: the goroutine check below would prove nothing")
	}
	limit := int64(10)
	s.timed("ALTER amp SET RATE_LIMIT = 10", func() error { return s.e.SetRateLimit(s.ctx, "amp", &limit) })
	s.timed("ALTER amp PAUSE", func() error { return s.e.SetPaused(s.ctx, "amp", true) })
	s.timed("ALTER amp RESUME", func() error { return s.e.SetPaused(s.ctx, "amp", false) })
	s.assertStuckAt(at)
	s.logStallHeap()
	s.timed("DROP MATERIALIZED VIEW amp", func() error { return s.e.Drop(s.ctx, "amp", false) })
	s.assertJobGone(amp)
	s.assertReleased(stallRows)
	// The source itself stays, and drops at once with nothing reading it.
	s.timed("DROP SOURCE bid", func() error { return s.e.Drop(s.ctx, "bid", false) })
	if _, ok := s.e.Catalog().ByName("bid"); ok {
		t.Fatal("bid is still in the catalog")
	}
}

// sourceAmp creates, in the background, SELECT … FROM (SELECT 1 AS k,
// price FROM bid) b JOIN t ON b.k = t.k.
func (s *stall) sourceAmp(bid *catalog.Relation) *catalog.Relation {
	b := newBuilder(s.ctx, s.e)
	src, err := ConnectorNode(bid)
	if err != nil {
		s.t.Fatal(err)
	}
	src.Connector.OffsetTable.ID = b.ids.Next()
	left := b.project(src, expr.Literal(int64(1), types.TInt64), expr.Input(1, types.TInt64))
	join := b.join(innerJoin, left, b.scan(s.tbl), []int{0}, []int{0})
	names := make([]string, len(join.Schema))
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	spec := b.view("amp", join, names)
	spec.DependsOn = append(spec.DependsOn, bid.ID)
	spec.Background, spec.Definition = true, "SELECT … FROM (SELECT 1 AS k, price FROM bid) b JOIN t ON b.k = t.k"
	rel, err := s.e.CreateMaterializedView(s.ctx, spec)
	if err != nil {
		s.t.Fatal(err)
	}
	return rel
}
