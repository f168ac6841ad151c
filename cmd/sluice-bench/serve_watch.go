package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// sourcesDone is the line serve -watch-sources prints once every
// connector source of every job has read to its end and committed it,
// followed by the barrier latencies seen meanwhile: p50, p99 (ms), count.
const sourcesDone = "sluice-bench sources done"

// sourcesFailed is the line it prints, with the error, when it cannot
// read the progress: the parent stops waiting at once.
const sourcesFailed = "sluice-bench sources failed"

// watchSources polls e every interval. From the first time it sees a
// connector source it records the commit latency of each new committed
// epoch; when every source is bounded and done it prints sourcesDone and
// returns.
func watchSources(ctx context.Context, e *engine.Engine, interval time.Duration, stdout io.Writer) error {
	err := pollSources(ctx, e, interval, stdout)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stdout, "%s\t%v\n", sourcesFailed, err)
	}
	return err
}

func pollSources(ctx context.Context, e *engine.Engine, interval time.Duration, stdout io.Writer) error {
	var lat []time.Duration
	var last uint64
	seen := false
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		ps, err := e.SourceProgress(ctx)
		if err != nil {
			return err
		}
		st, err := e.Coordinator().Status(ctx)
		if err != nil {
			return err
		}
		if len(ps) > 0 && seen && st.Barrier.Committed != last {
			lat = append(lat, st.Barrier.LastCommitLatency)
		}
		last, seen = st.Barrier.Committed, seen || len(ps) > 0
		if len(ps) == 0 || !allDone(ps) {
			continue
		}
		ms := millis(lat)
		_, err = fmt.Fprintf(stdout, "%s\t%.1f\t%.1f\t%d\n", sourcesDone, percentile(ms, 50), percentile(ms, 99), len(ms))
		return err
	}
}

func allDone(ps []engine.SourceProgress) bool {
	for _, p := range ps {
		if !p.Done() {
			return false
		}
	}
	return true
}
