package topn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

const testActor stream.ActorID = 7

// harness drives one executor from a datadriven script: it pushes messages
// into a mock source and pulls output until the executor asks for more
// input than the script holds.
type harness struct {
	schema []types.Type
	node   *plan.Node
	cfg    config
	env    *stream.Env
	src    *stream.MockSource
	exec   stream.Executor
	epoch  uint64
}

// build makes a fresh executor over the harness's store, as recovery does,
// whose first barrier is epoch.
func (h *harness) build(epoch uint64) error {
	lay, sp, err := validate(h.node, h.schema)
	if err != nil {
		return err
	}
	table, err := openStateTable(h.env, h.node.TopN.Table)
	if err != nil {
		return err
	}
	h.epoch = epoch
	h.src = stream.NewMockSource(h.schema, stream.NewBarrier(epoch))
	h.exec = stream.Checked("topn", newExecutor(h.src, table, lay, sp, h.cfg))
	return nil
}

// topNArgs builds a TopN node from `new` arguments:
//
//	schema=(int,int) key=(0) order=(1:desc:nullsfirst,2) limit=3 offset=1 group=(0) ties
func topNArgs(t *testing.T, d *datadriven.TestData) ([]types.Type, *plan.TopN) {
	t.Helper()
	var schema []types.Type
	var key []int
	n := &plan.TopN{Limit: -1}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "schema":
			for _, v := range a.Vals {
				ty, ok := types.ParseTypeName(v)
				if !ok {
					t.Fatalf("unknown type %q", v)
				}
				schema = append(schema, ty)
			}
		case "key":
			key = ints(t, a.Vals)
		case "group":
			n.GroupKeys = ints(t, a.Vals)
		case "order":
			for _, v := range a.Vals {
				n.OrderBy = append(n.OrderBy, parseOrder(t, v))
			}
		case "limit":
			n.Limit = int64(ints(t, a.Vals)[0])
		case "offset":
			n.Offset = int64(ints(t, a.Vals)[0])
		case "ties":
			n.WithTies = true
		case "rank":
			n.Rank = true
		}
	}
	n.Table = tableFor(schema, n.GroupKeys, n.OrderBy, key)
	return schema, n
}

// tableFor lays out the state table as the planner does: group keys, then
// order-by columns with their orders, then the stream key.
func tableFor(schema []types.Type, group []int, order []plan.ColumnOrder, key []int) plan.Table {
	tab := plan.Table{ID: 1, Types: schema}
	for _, g := range group {
		tab.PK = append(tab.PK, g)
		tab.Orders = append(tab.Orders, codec.Order{})
	}
	for _, o := range order {
		tab.PK = append(tab.PK, o.Column)
		tab.Orders = append(tab.Orders, o.Order)
	}
	for _, k := range key {
		tab.PK = append(tab.PK, k)
		tab.Orders = append(tab.Orders, codec.Order{})
	}
	tab.DistKey = group
	return tab
}

func parseOrder(t *testing.T, v string) plan.ColumnOrder {
	parts := strings.Split(v, ":")
	var o plan.ColumnOrder
	o.Column = ints(t, parts[:1])[0]
	for _, p := range parts[1:] {
		switch p {
		case "desc":
			o.Order.Desc = true
		case "nullsfirst":
			o.Order.NullsFirst = true
		default:
			t.Fatalf("bad order %q", v)
		}
	}
	return o
}

func ints(t *testing.T, vals []string) []int {
	out := make([]int, len(vals))
	for i, v := range vals {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("bad int %q", v)
		}
		out[i] = n
	}
	return out
}

// drain pulls until the source runs dry and renders what came out.
func (h *harness) drain(ctx context.Context) (string, error) {
	var sb strings.Builder
	for {
		msg, err := h.exec.Next(ctx)
		if errors.Is(err, stream.ErrScriptEnd) {
			return sb.String(), nil
		}
		if err != nil {
			return sb.String(), err
		}
		switch {
		case msg.Chunk != nil:
			sb.WriteString(msg.Chunk.String())
		case msg.Barrier != nil:
			fmt.Fprintf(&sb, "%s\n", msg.Barrier)
		}
	}
}

func (h *harness) push(t *testing.T, d *datadriven.TestData) {
	switch d.Cmd {
	case "chunk":
		h.src.Push(stream.TextChunk(h.schema, d.Input))
	case "barrier":
		h.epoch++
		h.src.Push(stream.NewBarrier(h.epoch))
	case "stop":
		h.epoch++
		h.src.Push(stream.NewStopBarrier(h.epoch, testActor))
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
}

func topNNode(schema []types.Type, tn *plan.TopN) *plan.Node {
	if tn.Rank {
		schema = append(slices.Clip(schema), types.TInt64)
	}
	return &plan.Node{Kind: plan.KindTopN, Schema: schema, TopN: tn}
}
