package session

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sluice-db/sluice/internal/engine"
)

// BenchmarkConcurrentInserts: 16 clients of single-row prepared INSERTs
// into a table (on disk) read by a join view and an aggregate view, as in
// sluice-bench ingest's INSERT figure. b.N is the total statement count.
func BenchmarkConcurrentInserts(b *testing.B) {
	const clients = 16
	ctx := context.Background()
	p, err := StartPlayground(ctx, engine.Options{Dir: b.TempDir(), BarrierInterval: time.Second}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	setup, err := pgx.Connect(ctx, p.Server.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE ins_bid (id bigint PRIMARY KEY, auction bigint, price bigint)",
		"CREATE TABLE auction_info (auction bigint PRIMARY KEY, cat int)",
		"INSERT INTO auction_info SELECT g, g % 10 FROM generate_series(0, 999) AS g",
		"CREATE MATERIALIZED VIEW ins_join AS SELECT b.id, b.price, a.cat FROM ins_bid b JOIN auction_info a ON b.auction = a.auction",
		"CREATE MATERIALIZED VIEW ins_by_auction AS SELECT auction, count(*) AS n, sum(price) AS total FROM ins_bid GROUP BY auction",
	} {
		if _, err := setup.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	conns := make([]*pgx.Conn, clients)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, p.Server.DSN()); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; k < b.N; k += clients {
				if _, err := c.Exec(ctx, "INSERT INTO ins_bid (id, auction, price) VALUES ($1, $2, $3)", int64(k), int64(k%1000), int64(k)); err != nil {
					errs <- fmt.Errorf("insert %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "stmts/s")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us/stmt")
}
