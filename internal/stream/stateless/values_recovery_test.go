package stateless

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestValuesNotRepeatedAfterRecovery: with a flag table, rows whose epoch
// committed are not emitted again by a rebuilt actor; rows whose epoch was
// lost are.
func TestValuesNotRepeatedAfterRecovery(t *testing.T) {
	ctx := context.Background()
	st := streamtest.OpenStore(t)
	node := valuesNode([]types.Type{i64}, []expr.Desc{lit(int64(7), i64)})
	tbl := ValuesTable(42)
	node.Values.Table = &tbl
	run := func(epochs ...uint64) []string {
		env := &stream.Env{Store: st, ActorID: testActor, Expr: &expr.Context{}, Barriers: inbox(epochs...)}
		e, err := Build(env, nil, node, nil)
		if err != nil {
			t.Fatal(err)
		}
		return drain(t, ctx, e)
	}
	// First incarnation: the rows ride epoch 2, which is lost.
	checkOutput(t, run(1, 2), []string{"barrier 1", "+ 7", "barrier 2 stop"})
	st.AbortUncommitted()
	// Second: emits again (nothing committed), and epoch 4 commits.
	checkOutput(t, run(3, 4), []string{"barrier 3", "+ 7", "barrier 4 stop"})
	if err := st.Commit(ctx, 4, nil); err != nil {
		t.Fatal(err)
	}
	// Third: the committed flag suppresses the rows.
	checkOutput(t, run(5, 6), []string{"barrier 5", "barrier 6 stop"})
}
