package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// ingestResults is everything one ingest run measured.
type ingestResults struct {
	figures            []figureResult
	clients            *clientsResult
	update             *updateResult
	peakRSS            uint64
	dataBytes          int
	auctions           int // distinct auction ids in the bids
	loadStart, loadEnd string
}

func (res *ingestResults) write(w io.Writer, c ingestConfig, srv *serverProcess, pg *postgres, notIdle []string) error {
	store := "Pebble on disk in " + srv.dir
	if c.engine.inMemory {
		store = "in memory"
	}
	fmt.Fprintln(w, "sluice-bench ingest")
	for _, kv := range [][2]string{
		{"command", c.commandLine()},
		{"machine", fmt.Sprintf("%s/%s, %d cores (runtime.NumCPU; GOMAXPROCS %d), %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())},
		{"load", fmt.Sprintf("1-minute load average %s at start, %s at end", res.loadStart, res.loadEnd)},
		{"sluice", fmt.Sprintf("process %d (sluice-bench serve), %s, barrier every %s, parallelism %s, commit delay %s", srv.pid(), store, c.engine.barrier, parallelismText(c.engine.parallelism), c.engine.commitDelay)},
		{"postgres", fmt.Sprintf("%s, private cluster on port %d (pgtest, restarted with %s)", pg.version, pg.Port(), pg.settings)},
		{"data", fmt.Sprintf("%d Nexmark-style bids (7 columns), %d distinct auctions, seed %d; %.1f MiB of COPY text generated before any measurement", c.rows, res.auctions, c.seed, mib(uint64(res.dataBytes)))},
		{"cpu", "utime+stime+cutime+cstime from /proc of the sluice server process, and of the postmaster and its descendants; " +
			"the benchmark's clients (pgx, latency bookkeeping) are in this process, in neither figure; both sampled right before and after each figure, connections open"},
		{"method", fmt.Sprintf("each figure on fresh tables, Sluice first (the INSERT figure in %d windows per system, alternating, the order flipping each pair); before each, Sluice FLUSHes, Postgres CHECKPOINTs and both fall to ≤ %.2f cores over %s", c.windows, c.idleCPU, c.idleWindow)},
	} {
		fmt.Fprintf(w, "  %-9s %s\n", kv[0]+":", kv[1])
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tsluice cpu s\tpostgres cpu s\tratio\tsluice wall s\tpostgres wall s\tratio\tnotes")
	for _, f := range res.figures {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%.2f\t%.2f\t%s\t%s\n", f.label, f.sl.cpu.Seconds(), f.pg.cpu.Seconds(), ratioText(f.sl.cpu, f.pg.cpu),
			f.sl.wall.Seconds(), f.pg.wall.Seconds(), ratioText(f.sl.wall, f.pg.wall),
			strings.Join(append(f.notes, fmt.Sprintf("bench client cpu %.2f / %.2f s", f.sl.self.Seconds(), f.pg.self.Seconds()),
				fmt.Sprintf("sluice VmHWM after %.0f MiB", mib(f.peakRSS))), "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := res.writeDetails(w, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "sluice peak RSS (VmHWM of the server process): %.1f MiB; the %.1f MiB of pre-generated COPY text is in the client\n",
		mib(res.peakRSS), mib(uint64(res.dataBytes)))
	for _, n := range notIdle {
		fmt.Fprintf(w, "warning: measured while not idle: %s\n", n)
	}
	fmt.Fprintln(w)
	return res.report().writeJSON(w)
}

func (res *ingestResults) writeDetails(w io.Writer, c ingestConfig) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if cl := res.clients; cl != nil {
		fmt.Fprintln(tw, cl.figure.label+" ("+c.duration.String()+")\tsluice\tpostgres\tratio")
		slRate, pgRate := cl.sl.rate(), cl.pg.rate()
		fmt.Fprintf(tw, "  statements/s\t%.0f\t%.0f\t%s\n", slRate, pgRate, ratioFloat(slRate, pgRate))
		writeLatencies(tw, cl.sl.latency, cl.pg.latency)
		a, b := perThousand(cl.figure.sl.cpu, cl.sl.stmts), perThousand(cl.figure.pg.cpu, cl.pg.stmts)
		fmt.Fprintf(tw, "  cpu ms per 1000 statements\t%.1f\t%.1f\t%s\n", a, b, ratioFloat(a, b))
		fmt.Fprintf(tw, "  statements\t%d\t%d\t\n", cl.sl.stmts, cl.pg.stmts)
		fmt.Fprintln(tw, "\t\t\t")
	}
	if up := res.update; up != nil {
		fmt.Fprintf(tw, "%s (%d updates, %d rows)\tsluice\tpostgres\tratio\n", up.figure.label, c.updates, c.rows)
		writeLatencies(tw, up.sl, up.pg)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func writeLatencies(w io.Writer, sl, pg []time.Duration) {
	for _, p := range []float64{50, 99} {
		a, b := percentile(millis(sl), p), percentile(millis(pg), p)
		fmt.Fprintf(w, "  latency p%.0f\t%s\t%s\t%s\n", p, formatValue(a, "ms"), formatValue(b, "ms"), ratioFloat(a, b))
	}
}

func (cs clientSide) rate() float64 {
	if cs.wall <= 0 {
		return 0
	}
	return float64(cs.stmts) / cs.wall.Seconds()
}

func perThousand(cpu time.Duration, stmts int) float64 {
	if stmts == 0 {
		return 0
	}
	return float64(cpu) / float64(time.Millisecond) * 1000 / float64(stmts)
}

func ratioText(a, b time.Duration) string { return ratioFloat(a.Seconds(), b.Seconds()) }

func ratioFloat(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// report is the machine-readable side: one JSON line per metric.
func (res *ingestResults) report() *report {
	r := &report{bench: "ingest"}
	for _, f := range res.figures {
		reps := f.reps
		if len(reps) == 0 {
			reps = []figureResult{f}
		}
		each := func(pick func(figureResult) float64) []float64 {
			out := make([]float64, len(reps))
			for i, x := range reps {
				out[i] = pick(x)
			}
			return out
		}
		for _, q := range []struct {
			what   string
			sl, pg func(figureResult) time.Duration
		}{
			{"cpu", func(x figureResult) time.Duration { return x.sl.cpu }, func(x figureResult) time.Duration { return x.pg.cpu }},
			{"wall", func(x figureResult) time.Duration { return x.sl.wall }, func(x figureResult) time.Duration { return x.pg.wall }},
		} {
			r.add(secondsEach(f.key+"_sluice_"+q.what+"_s", f.label+", sluice "+q.what, each(func(x figureResult) float64 { return q.sl(x).Seconds() })))
			r.add(secondsEach(f.key+"_postgres_"+q.what+"_s", f.label+", postgres "+q.what, each(func(x figureResult) float64 { return q.pg(x).Seconds() })))
			r.add(ratiosEach(f.key+"_"+q.what+"_ratio", f.label+", "+q.what+" sluice/postgres", reps, q.sl, q.pg))
		}
		r.add(seconds(f.key+"_bench_client_cpu_s", f.label+", this process's cpu during the postgres run", f.pg.self))
		r.add(seconds(f.key+"_bench_client_sluice_cpu_s", f.label+", this process's cpu during the sluice run", f.sl.self))
		r.add(secondsEach(f.key+"_sluice_deferred_cpu_s", f.label+", sluice cpu after it until idle", each(func(x figureResult) float64 { return x.slAfter.cpu.Seconds() })))
		r.add(secondsEach(f.key+"_postgres_deferred_cpu_s", f.label+", postgres cpu after it: CHECKPOINT, then until idle", each(func(x figureResult) float64 { return x.pgAfter.cpu.Seconds() })))
		if f.flush.cpu > 0 {
			r.add(secondsEach(f.key+"_sluice_flush_cpu_s", f.label+", sluice's FLUSH after it, cpu", each(func(x figureResult) float64 { return x.flush.cpu.Seconds() })))
		}
		if len(f.reps) > 0 {
			r.add(metric{key: f.key + "_target_ratio", label: f.label + ", cpu sluice/postgres as its target states it, every repetition",
				unit: "x", samples: each(figureResult.targetRatio)})
		}
		r.add(metric{key: f.key + "_sluice_peak_rss_mib", label: f.label + ", VmHWM after", unit: "MiB", samples: []float64{mib(f.peakRSS)}})
	}
	res.clientMetrics(r)
	if res.update != nil {
		r.add(metric{key: "update_pk_sluice_latency_ms", label: "update by pk, sluice latency", unit: "ms", samples: millis(res.update.sl)})
		r.add(metric{key: "update_pk_postgres_latency_ms", label: "update by pk, postgres latency", unit: "ms", samples: millis(res.update.pg)})
	}
	r.add(metric{key: "sluice_peak_rss_mib", label: "sluice peak RSS (VmHWM of the server process)", unit: "MiB", samples: []float64{mib(res.peakRSS)}})
	r.add(metric{key: "generated_data_mib", label: "pre-generated COPY text", unit: "MiB", samples: []float64{mib(uint64(res.dataBytes))}})
	return r
}

func (res *ingestResults) clientMetrics(r *report) {
	cl := res.clients
	if cl == nil {
		return
	}
	r.add(metric{key: "inserts_sluice_stmts_per_s", label: "inserts, sluice statements/s", unit: "count", samples: []float64{cl.sl.rate()}})
	r.add(metric{key: "inserts_postgres_stmts_per_s", label: "inserts, postgres statements/s", unit: "count", samples: []float64{cl.pg.rate()}})
	r.add(ratioOf("inserts_stmts_ratio", "inserts, statements/s sluice/postgres", cl.sl.rate(), cl.pg.rate()))
	r.add(metric{key: "inserts_pair_stmts_ratio", label: "inserts, statements/s sluice/postgres of each window pair", unit: "x", samples: cl.pairRatios})
	r.add(metric{key: "inserts_sluice_latency_ms", label: "inserts, sluice latency", unit: "ms", samples: millis(cl.sl.latency)})
	r.add(metric{key: "inserts_postgres_latency_ms", label: "inserts, postgres latency", unit: "ms", samples: millis(cl.pg.latency)})
	r.add(seconds("inserts_sluice_flush_cpu_s", "inserts, sluice FLUSH after the window, cpu", cl.sl.flush.cpu))
	r.add(seconds("inserts_sluice_flush_wall_s", "inserts, sluice FLUSH after the window, wall", cl.sl.flush.wall))
}

func seconds(key, label string, d time.Duration) metric {
	return secondsEach(key, label, []float64{d.Seconds()})
}

func secondsEach(key, label string, s []float64) metric {
	return metric{key: key, label: label, unit: "s", samples: s}
}

// ratiosEach is ratioOf for every repetition of a figure.
func ratiosEach(key, label string, reps []figureResult, sl, pg func(figureResult) time.Duration) metric {
	m := metric{key: key, label: label, unit: "x"}
	for _, x := range reps {
		if pg(x) <= 0 {
			m.note = "unavailable: postgres measured 0"
			m.samples = nil
			return m
		}
		m.samples = append(m.samples, sl(x).Seconds()/pg(x).Seconds())
	}
	return m
}

func ratioOf(key, label string, a, b float64) metric {
	m := metric{key: key, label: label, unit: "x"}
	if b <= 0 {
		m.note = "unavailable: postgres measured 0"
		return m
	}
	m.samples = []float64{a / b}
	return m
}
