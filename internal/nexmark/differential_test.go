package nexmark_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/nexmark"
	"github.com/sluice-db/sluice/internal/nexmark/crosscheck"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

// differentialEvents is how many events the differential test loads: a
// few seconds of the generator's default rate, enough for every hot key,
// the auctions' expiry windows and the joins to matter.
const differentialEvents = 20_000

// differentialWindows are q5's, q7's and q8's windows scaled down a
// hundredfold: the events span two seconds of event time.
var differentialWindows = crosscheck.Windows{Size: "100 milliseconds", Slide: "20 milliseconds"}

// TestViewsEqualPostgres feeds the same generated events, then the same
// updates and deletes, to PostgreSQL and Sluice, and checks that each view
// Sluice maintains holds what PostgreSQL's query over the same rows
// returns, halfway and at the end (package crosscheck; sluice-bench
// nexmark-verify runs the same over a million events).
func TestViewsEqualPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and an engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg, err := pgx.Connect(ctx, pgtest.StartPostgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	p, err := session.StartPlayground(ctx, engine.Options{Dir: t.TempDir(), BarrierInterval: 50 * time.Millisecond}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	sl, err := pgx.Connect(ctx, p.Server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close(ctx)

	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	qs := crosscheck.Queries(differentialWindows)
	must(t, crosscheck.Setup(ctx, pg, sl))
	// The views exist before any event, so every row reaches them as a
	// change: four loads, then updates and deletes that move rows between
	// groups, join partners and filters.
	must(t, crosscheck.CreateViews(ctx, sl, qs))
	const loads = 4
	for l := range int64(loads) {
		must(t, crosscheck.Load(ctx, g, l*differentialEvents/loads, (l+1)*differentialEvents/loads, pg, sl))
		if l == 1 {
			compareViews(ctx, t, pg, sl, qs, "after half the events")
		}
	}
	must(t, crosscheck.ApplyChanges(ctx, pg, sl))
	compareViews(ctx, t, pg, sl, qs, "after the updates and deletes")
}

// compareViews checks each of Sluice's views against PostgreSQL's query.
func compareViews(ctx context.Context, t *testing.T, pg, sl *pgx.Conn, qs []crosscheck.Query, when string) {
	t.Helper()
	res, err := crosscheck.Compare(ctx, pg, sl, qs)
	must(t, err)
	for _, r := range res {
		switch {
		case r.PG == 0:
			t.Errorf("%s, %s: PostgreSQL returns no rows; the events do not exercise it", when, r.Query.Name)
		case !r.Equal():
			t.Errorf("%s, %s: Sluice's view has %d rows, PostgreSQL's query %d; first difference: %s",
				when, r.Query.Name, r.Sluice, r.PG, r.FirstDiff)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
