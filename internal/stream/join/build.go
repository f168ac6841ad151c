package join

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// defaultLargeKeyRows is the most rows of one join key kept in the cache.
// A key with more is probed by streaming from the state table, so one hot
// key cannot pull millions of rows into memory.
const defaultLargeKeyRows = 4096

// config holds the executor's tunables; tests shrink them to exercise the
// cache-miss, large-key and uncached paths (adaptMinStores 0 is the
// default).
type config struct {
	chunkSize      int
	cacheEntries   int
	largeKeyRows   int
	adaptMinStores int
}

func defaultConfig(env *stream.Env) config {
	return config{
		chunkSize:      env.ChunkSizeOrDefault(),
		cacheEntries:   env.CacheOrDefault(),
		largeKeyRows:   defaultLargeKeyRows,
		adaptMinStores: defaultAdaptMinStores,
	}
}

// Build constructs the executor for a hash_join node over its two inputs
// (0 = left, 1 = right). The executor starts its input pumps in g on its
// first Next call. A malformed node is an error, never a panic.
func Build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor) (stream.Executor, error) {
	if n == nil || n.Kind != plan.KindHashJoin {
		return nil, fmt.Errorf("join: cannot build a %v node", kindOf(n))
	}
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("join: no state store in the environment")
	}
	return build(env, g, n, inputs, storeOpener(env), defaultConfig(env))
}

func kindOf(n *plan.Node) any {
	if n == nil {
		return "nil"
	}
	return n.Kind
}

func build(env *stream.Env, g *task.Group, n *plan.Node, inputs []stream.Executor, open tableOpener, cfg config) (*HashJoin, error) {
	if g == nil {
		return nil, fmt.Errorf("join: no task group")
	}
	if len(inputs) != 2 {
		return nil, fmt.Errorf("join: hash join needs 2 inputs, got %d", len(inputs))
	}
	sp, err := newSpec(n, [2][]types.Type{inputs[0].Schema(), inputs[1].Schema()})
	if err != nil {
		return nil, err
	}
	j := &HashJoin{
		sp:        sp,
		exprCtx:   exprContext(env),
		g:         g,
		inputs:    inputs,
		chunkSize: max(cfg.chunkSize, 1),
		out:       types.NewBuilder(sp.outTypes, max(cfg.chunkSize, 1)),
		outRow:    make(types.Row, len(sp.output)),
	}
	for i := range j.sides {
		if j.sides[i], err = openSide(sp.sides[i], open, cfg); err != nil {
			return nil, err
		}
		j.amp.keyTypes[i] = sp.sides[i].keyTypes
	}
	if err := j.openPending(env, n.HashJoin.PendingTable, open); err != nil {
		return nil, err
	}
	if env != nil && env.Stats != nil {
		j.stats, j.amp.stats = env.Stats, &stream.JoinStats{}
		env.Stats.AddJoin(j.amp.stats)
		j.amp.actor, j.amp.id, j.amp.onOver = env.Stats, env.ActorID, env.OnAmplification
	}
	return j, nil
}

func exprContext(env *stream.Env) *expr.Context {
	if env != nil && env.Expr != nil {
		return env.Expr
	}
	return &expr.Context{}
}

// deferAppendOnly turns deferredTable on; a test compares with it off.
var deferAppendOnly = true

func openSide(ss sideSpec, open tableOpener, cfg config) (*side, error) {
	s := &side{
		sideSpec:       ss,
		cache:          storage.NewLRU[string, *keyEntry](cfg.cacheEntries),
		largeKeyRows:   max(cfg.largeKeyRows, 1),
		adaptMinStores: cmp.Or(cfg.adaptMinStores, defaultAdaptMinStores), // unset: the default
	}
	var err error
	if s.rows, err = open(ss.table); err != nil {
		return nil, fmt.Errorf("join: open state table %d: %w", ss.table.ID, err)
	}
	if deferAppendOnly && ss.appendOnly && ss.expiry != nil && !ss.outer {
		s.deferred = newDeferredTable(s.rows) // most rows expire in their epoch (deferred.go)
		s.rows = s.deferred
	}
	if ss.expiry != nil {
		s.exp.due.ints = ss.expiry.ints
	}
	if ss.outer {
		if s.degrees, err = open(*ss.degree); err != nil {
			return nil, fmt.Errorf("join: open degree table %d: %w", ss.degree.ID, err)
		}
	}
	return s, nil
}

// openPending opens the pending table of overtaken work (overtake.go),
// over every vnode: its rows are keyed by the actor's index. A plan
// without one leaves the join never overtaking.
func (j *HashJoin) openPending(env *stream.Env, t *plan.Table, open tableOpener) error {
	if t == nil || env == nil {
		return nil
	}
	if want := PendingTable(); !sameShape(*t, want) {
		return fmt.Errorf("join: pending table %d is not shaped as a pending table", t.ID)
	}
	j.ot.index, j.ot.throttle = int64(env.Index), env.Throttle
	if env.Stats != nil {
		j.ot.behind = env.Stats.NewBehind()
	}
	var err error
	if env.Store != nil {
		var st *storage.StateTable
		if st, err = env.OpenTableAllVNodes(*t); err == nil {
			j.ot.table = storeTable{st}
		}
	} else {
		j.ot.table, err = open(*t)
	}
	if err != nil {
		return fmt.Errorf("join: open pending table %d: %w", t.ID, err)
	}
	return nil
}

// sameShape reports whether t has want's columns and keys.
func sameShape(t, want plan.Table) bool {
	return slices.Equal(t.Types, want.Types) && slices.Equal(t.PK, want.PK) && slices.Equal(t.DistKey, want.DistKey) &&
		len(t.Orders) == 0
}
