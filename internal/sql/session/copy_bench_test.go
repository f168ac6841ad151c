package session

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sluice-db/sluice/internal/engine"
)

// BenchmarkCopyIntoView: COPY (pgx CopyFrom, binary) of Nexmark-style
// bids into a table on disk, alone, under a passthrough view and under a
// GROUP BY auction view, then FLUSH, as in sluice-bench ingest's load
// figures. One op is one load of SLUICE_BENCH_COPY_ROWS rows (default
// 50 000) into fresh objects, over SLUICE_BENCH_COPY_AUCTIONS auctions
// (default 500; sluice-bench has one per 100 rows).
func BenchmarkCopyIntoView(b *testing.B) {
	copyBenchRows, auctions := 50000, 500
	if n, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_COPY_ROWS")); err == nil && n > 0 {
		copyBenchRows = n
	}
	if n, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_COPY_AUCTIONS")); err == nil && n > 0 {
		auctions = n
	}
	views := []struct{ name, view string }{
		{"plain", ""},
		{"passthrough", "SELECT * FROM %s"},
		{"groupby", "SELECT auction, count(*) AS n, max(price) AS mx, sum(price) AS total FROM %s GROUP BY auction"},
	}
	rows := make([][]any, copyBenchRows)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		rows[i] = []any{int64(1000 + i%auctions), int64(i % 7919), int64(i*13%100000 + 1), "channel-" + fmt.Sprint(i%4),
			"https://www.nexmark.com/" + fmt.Sprint(i%1000), at.Add(time.Duration(i) * time.Millisecond), "extra"}
	}
	cols := []string{"auction", "bidder", "price", "channel", "url", "date_time", "extra"}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			p, err := StartPlayground(ctx, engine.Options{Dir: b.TempDir(), BarrierInterval: time.Second}, Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Close() }()
			c, err := pgx.Connect(ctx, p.Server.DSN())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				table := fmt.Sprintf("bid%d", i)
				mustExec(b, c, "CREATE TABLE "+table+" (auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp, extra varchar)")
				if v.view != "" {
					mustExec(b, c, "CREATE MATERIALIZED VIEW "+table+"_v AS "+fmt.Sprintf(v.view, table))
				}
				b.StartTimer()
				before := processCPU()
				if _, err := c.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
					b.Fatal(err)
				}
				mustExec(b, c, "FLUSH")
				cpu += processCPU() - before
			}
			b.ReportMetric(float64(b.N*copyBenchRows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.N*copyBenchRows)/cpu.Seconds(), "rows/cpu-s")
		})
	}
}

// processCPU is the CPU time (user and system) this process has used:
// the server and the client, both in it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mustExec(b *testing.B, c *pgx.Conn, sql string) {
	b.Helper()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
}
