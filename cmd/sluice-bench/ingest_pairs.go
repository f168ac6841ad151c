package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// The INSERT figure in alternating windows. Its statements/s measured as
// one 10 s window per system, Sluice then PostgreSQL, moved from 0.75x to
// 1.18x between three runs in a row on the same commit: the machine's
// noise, not either system, set the ratio. So each system's -duration is
// cut into -windows windows that alternate between the systems, the order
// flipping each pair (Sluice first, then PostgreSQL first, ...), so drift
// over the run falls on both alike. The row sums the windows; the notes
// give the median and range of the pairs' ratios, and the JSON lines every
// pair's ratio.

// insertWindows runs the windows and sums each system's into res.
func (b *ingestBench) insertWindows(ctx context.Context, res *clientsResult, conns map[*side][]*pgx.Conn) error {
	n := b.cfg.windows
	d := b.cfg.duration / time.Duration(n)
	var base int64
	for k := range n {
		order := b.sides()
		if k%2 == 1 {
			slices.Reverse(order)
		}
		rates := map[bool]float64{}
		for _, s := range order {
			cs, m, err := b.insertWindow(ctx, s, conns[s], d, base)
			if err != nil {
				return err
			}
			base = max(base, cs.nextID)
			rates[s.sluice] = cs.rate()
			if s.sluice {
				res.sl.add(cs)
				res.figure.sl.add(m)
			} else {
				res.pg.add(cs)
				res.figure.pg.add(m)
			}
		}
		res.pairRatios = append(res.pairRatios, rates[true]/max(rates[false], 1e-9))
	}
	if n > 1 {
		r := slices.Sorted(slices.Values(res.pairRatios))
		res.figure.notes = append(res.figure.notes, fmt.Sprintf("statements/s over %d alternating pairs of %s windows: median pair %.2fx, range %.2f-%.2fx",
			n, d, median(r), r[0], r[len(r)-1]))
	}
	return nil
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// add sums another window of the same system into cs.
func (cs *clientSide) add(w clientSide) {
	cs.stmts += w.stmts
	cs.wall += w.wall
	cs.latency = append(cs.latency, w.latency...)
	cs.flush.add(w.flush)
}

func (m *measured) add(w measured) {
	m.cpu += w.cpu
	m.wall += w.wall
	m.self += w.self
}
