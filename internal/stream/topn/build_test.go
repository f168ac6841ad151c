package topn

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

var buildSchema = []types.Type{types.TInt64, types.TInt64, types.TVarchar}

// goodNode is PARTITION BY 1 ORDER BY 2 DESC LIMIT 3 over (k, g, v).
func goodNode() *plan.Node {
	order := []plan.ColumnOrder{{Column: 2, Order: codec.Order{Desc: true}}}
	tn := &plan.TopN{OrderBy: order, Limit: 3, GroupKeys: []int{1}}
	tn.Table = tableFor(buildSchema, tn.GroupKeys, order, []int{0})
	input := &plan.Node{Kind: plan.KindMerge, Schema: buildSchema, StreamKey: []int{0}}
	return &plan.Node{Kind: plan.KindTopN, Schema: buildSchema, StreamKey: []int{0}, TopN: tn, Inputs: []*plan.Node{input}}
}

func TestBuildRejectsMalformedNodes(t *testing.T) {
	cases := []struct {
		name   string
		mangle func(n *plan.Node)
		want   string
	}{
		{"wrong kind", func(n *plan.Node) { n.Kind = plan.KindFilter }, "not a top_n"},
		{"no TopN", func(n *plan.Node) { n.TopN = nil }, "without TopN"},
		{"negative offset", func(n *plan.Node) { n.TopN.Offset = -1 }, "negative offset"},
		{"ties without limit", func(n *plan.Node) { n.TopN.Limit, n.TopN.WithTies = -1, true }, "WITH TIES"},
		{"order column out of range", func(n *plan.Node) { n.TopN.OrderBy[0].Column = 9 }, "out of range"},
		{"group key out of range", func(n *plan.Node) { n.TopN.GroupKeys = []int{-1} }, "out of range"},
		{"schema mismatch", func(n *plan.Node) { n.Schema = buildSchema[:2] }, "differs"},
		{"table types", func(n *plan.Node) { n.TopN.Table.Types = buildSchema[:2] }, "state table has 2 columns"},
		{"pk not starting with group", func(n *plan.Node) { n.TopN.Table.PK = []int{2, 1, 0} }, "start with the group keys"},
		{"pk order differs", func(n *plan.Node) { n.TopN.Table.Orders[1] = codec.Order{} }, "ORDER BY item"},
		{"pk too short", func(n *plan.Node) { n.TopN.Table.PK, n.TopN.Table.Orders = []int{1}, nil }, "shorter"},
		{"stream key not in pk", func(n *plan.Node) {
			n.TopN.Table.PK, n.TopN.Table.Orders = n.TopN.Table.PK[:2], n.TopN.Table.Orders[:2]
		}, "stream key"},
		{"dist key not a group key", func(n *plan.Node) { n.TopN.Table.DistKey = []int{0} }, "distribution key"},
	}
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := goodNode()
			c.mangle(n)
			src := stream.NewMockSource(buildSchema)
			_, err := Build(env, nil, n, []stream.Executor{src})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestBuildWiresAWorkingExecutor(t *testing.T) {
	env := &stream.Env{Store: streamtest.OpenStore(t), ActorID: testActor, ChunkSize: 2}
	src := stream.NewMockSource(buildSchema,
		stream.NewBarrier(1),
		stream.TextChunk(buildSchema, "+ 1 1 a\n+ 2 1 c\n+ 3 1 b\n+ 4 1 d\n+ 5 2 z"),
		stream.NewStopBarrier(2, testActor))
	exec, err := Build(env, nil, goodNode(), []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range streamtest.PullUntilStop(context.Background(), t, exec, testActor) {
		got = append(got, strings.TrimSpace(msg.String()))
	}
	// Group 1 keeps d, c, b (v DESC); group 2 keeps z; chunks of two rows.
	want := []string{"barrier 1", "chunk:\n+ 4 1 d\n+ 2 1 c", "chunk:\n+ 3 1 b\n+ 5 2 z", "barrier 2 stop(1 actors)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
