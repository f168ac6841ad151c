package mview

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// The executor starts no goroutines but the stores the tests open do;
// goleak checks every test closes its store.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testActor stream.ActorID = 5

var (
	i64 = types.TInt64
	str = types.TVarchar
)

// testingT is the part of testing.T and rapid.T the helpers need.
type testingT interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

func openStore(t testingT) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// kvTable is a view (k bigint PRIMARY KEY, v varchar), distributed by k.
func kvTable() plan.Table {
	return plan.Table{ID: 10, Types: []types.Type{i64, str}, PK: []int{0}, DistKey: []int{0}}
}

func materializeNode(t plan.Table) *plan.Node {
	return &plan.Node{Kind: plan.KindMaterialize, Schema: t.Types, Materialize: &plan.Materialize{Table: t}}
}

func render(msg stream.Message) string {
	switch {
	case msg.Chunk != nil:
		return strings.TrimRight(msg.Chunk.StringAll(), "\n")
	case msg.Barrier != nil:
		if msg.Barrier.IsStop(testActor) {
			return fmt.Sprintf("barrier %d stop", msg.Barrier.Epoch)
		}
		return fmt.Sprintf("barrier %d", msg.Barrier.Epoch)
	}
	return fmt.Sprint(msg)
}

// pullUntilBarrier pulls e until a barrier comes out and returns what it
// pulled, the barrier last.
func pullUntilBarrier(t testingT, ctx context.Context, e stream.Executor) []stream.Message {
	t.Helper()
	var out []stream.Message
	for n := 0; n < 100000; n++ {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, msg)
		if msg.Barrier != nil {
			return out
		}
	}
	t.Fatalf("no barrier after 100000 messages")
	return nil
}

func formatRows(rows []types.Row, ts []types.Type) string {
	var sb strings.Builder
	for _, r := range rows {
		sb.WriteString(types.FormatRow(r, ts))
		sb.WriteByte('\n')
	}
	return sb.String()
}
