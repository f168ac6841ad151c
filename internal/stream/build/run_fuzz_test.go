package build_test

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/build"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// fuzzEpochs is how many barriers each input of a fuzzed chain delivers.
const fuzzEpochs = 3

// tokens are candidate text values; each column gets those its type parses.
var tokens = []string{"1", "0", "-1", "7", "t", "f", "x", "'a b'", "2024-01-01", "12:00:00", "2024-01-01 12:00:00", "1 day", `\x01`}

// sampleChunk returns a chunk of schema with inserts, deletes and an update
// pair over a few values per column, or nil if some column type cannot hold
// data (an unknown type id).
func sampleChunk(schema []types.Type) *types.Chunk {
	vals := make([][]string, len(schema))
	for i, t := range schema {
		vals[i] = []string{"NULL"}
		for _, tok := range tokens {
			if _, err := types.ParseDatum(strings.Trim(tok, "'"), t); err == nil {
				vals[i] = append(vals[i], tok)
			}
		}
	}
	var b strings.Builder
	for r, op := range []string{"+", "+", "+", "-", "U-", "U+", "+"} {
		b.WriteString(op)
		for i := range schema {
			b.WriteString(" " + vals[i][(r+i)%len(vals[i])])
		}
		b.WriteString("\n")
	}
	c, err := types.ParseChunk(schema, b.String())
	if err != nil {
		return nil
	}
	return c
}

// script is what each input of a fuzzed chain delivers: barriers 1…n with
// a sample chunk after each but the last.
func script(schema []types.Type) []stream.Message {
	var msgs []stream.Message
	for e := uint64(1); e <= fuzzEpochs; e++ {
		msgs = append(msgs, stream.NewBarrier(e))
		if c := sampleChunk(schema); c != nil && e < fuzzEpochs {
			msgs = append(msgs, stream.ChunkMsg(c))
		}
	}
	return msgs
}

// mergeSchemas maps each merge description in the tree to its node's
// schema, so the fuzz feeds each exchange input data of its declared shape.
func mergeSchemas(n *plan.Node, out map[*plan.Merge][]types.Type) {
	if n == nil {
		return
	}
	if n.Merge != nil {
		out[n.Merge] = n.Schema
	}
	for _, in := range n.Inputs {
		mergeSchemas(in, out)
	}
}

// runOutcome is what running a fuzzed chain came to.
type runOutcome struct {
	built   bool
	rows    int // rows the chain put out
	panic   *task.PanicError
	err     error
	timeout bool
}

// tryRun builds root as one actor, feeds every input a few epochs of
// sample data and pulls the chain until the last barrier, an error or a
// timeout. A panic anywhere — in the builder, the chain or an input pump —
// is reported as such.
func tryRun(store *storage.Store, root *plan.Node) runOutcome {
	g, ctx := task.NewGroup(context.Background())
	var built []stream.Executor
	inbox := make(chan *stream.Barrier, fuzzEpochs)
	for e := uint64(1); e <= fuzzEpochs; e++ {
		inbox <- stream.NewBarrier(e).Barrier
	}
	env := &stream.Env{Store: store, ActorID: 7, Throttle: stream.NewThrottle(), ChunkSize: 4, CacheEntries: 4,
		Expr: &expr.Context{StableRandom: true}, Barriers: inbox,
		OnExecutor: func(e stream.Executor) { built = append(built, e) }}
	schemas := map[*plan.Merge][]types.Type{}
	mergeSchemas(root, schemas)
	var outs []*stream.Output
	merges := func(m *plan.Merge) ([]*stream.Input, error) {
		msgs := script(schemas[m])
		out, in := stream.NewChannel(1, 7, len(msgs))
		for _, msg := range msgs {
			_ = out.Send(ctx, msg)
		}
		outs = append(outs, out)
		return []*stream.Input{in}, nil
	}
	var res runOutcome
	exec, err := build.Actor(env, g, root, merges)
	if err == nil {
		res.built = true
		err = task.Run(ctx, "pull", func(ctx context.Context) error { return pull(ctx, exec, &res.rows) })
	}
	g.Cancel()
	if gerr := g.Wait(); err == nil || errors.Is(err, context.Canceled) {
		err = gerr
	}
	for _, e := range built {
		if r, ok := e.(stream.Releaser); ok {
			r.Release()
		}
	}
	res.err = err
	res.timeout = errors.Is(err, context.DeadlineExceeded)
	errors.As(err, &res.panic)
	return res
}

// pull reads the chain until the last epoch's barrier. The deadline only
// bounds a chain that waits for more input than the script gives (a
// mutated plan may read an input twice); it is not an assertion.
func pull(ctx context.Context, exec stream.Executor, rows *int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := stream.Checked("fuzz", exec)
	for {
		msg, err := c.Next(ctx)
		if err != nil {
			return err
		}
		if msg.Chunk != nil {
			*rows += msg.Chunk.Cardinality()
		}
		if msg.Barrier != nil && msg.Barrier.Epoch == fuzzEpochs {
			return nil
		}
	}
}
