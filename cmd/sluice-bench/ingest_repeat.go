package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// The machines the benchmark runs on are shared: the same COPY figure
// measured twice in a row moved PostgreSQL's CPU seconds from 1.5 to 2.8
// and the ratio from 0.84x to 1.25x. So -repeat N measures each COPY
// figure N times, each time on fresh tables in both systems, Sluice
// then PostgreSQL back to back, and shows the pair whose ratio is the
// median; the notes give the range, and the JSON lines every
// repetition's figures.

// targetRatio is the ratio a COPY figure's target is stated in: Sluice's
// CPU (with the FLUSH that writes a plain table's state) over PostgreSQL's.
func (r figureResult) targetRatio() float64 {
	return (r.sl.cpu + r.flush.cpu).Seconds() / max(r.pg.cpu.Seconds(), 1e-9)
}

// repeatLoad measures f b.cfg.repeat times and returns the median pair,
// with every pair in reps.
func (b *ingestBench) repeatLoad(ctx context.Context, f loadSpec) (figureResult, error) {
	runs := make([]figureResult, 0, b.cfg.repeat)
	for k := range b.cfg.repeat {
		spec := f
		if k > 0 {
			spec.table = fmt.Sprintf("%s_%d", f.table, k)
		}
		r, err := b.loadFigure(ctx, spec)
		if err != nil {
			return r, err
		}
		if k < b.cfg.repeat-1 {
			if err := b.dropLoad(ctx, spec); err != nil {
				return r, err
			}
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(x, y figureResult) int {
		return cmp.Compare(x.targetRatio(), y.targetRatio())
	})
	med := runs[(len(runs)-1)/2]
	med.reps = runs
	if len(runs) > 1 {
		med.notes = append(med.notes, fmt.Sprintf("%s over %d pairs: median %.2fx, range %.2f-%.2fx (this row is the median pair)",
			targetWhat(f), len(runs), med.targetRatio(), runs[0].targetRatio(), runs[len(runs)-1].targetRatio()))
	}
	return med, nil
}

// targetWhat names what targetRatio compares for f.
func targetWhat(f loadSpec) string {
	if f.view == "" {
		return "copy+FLUSH cpu ratio"
	}
	return "cpu ratio"
}

// dropLoad drops a repetition's view and table in both systems, so that
// every repetition starts from the same store.
func (b *ingestBench) dropLoad(ctx context.Context, f loadSpec) error {
	for _, s := range b.sides() {
		if s.sluice && f.view != "" {
			if err := s.exec(ctx, "DROP MATERIALIZED VIEW "+f.table+"_v"); err != nil {
				return err
			}
		}
		if err := s.exec(ctx, "DROP TABLE "+f.table); err != nil {
			return err
		}
	}
	return nil
}
