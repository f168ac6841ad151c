package stateless

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

func projectNode(exprs ...expr.Desc) *plan.Node {
	return &plan.Node{Kind: plan.KindProject, Project: &plan.Project{Exprs: exprs}}
}

func TestProject(t *testing.T) {
	schema := []types.Type{i64, i64}
	cases := []struct {
		name      string
		exprs     []expr.Desc
		script    string
		want      []string
		rowErrors uint64
	}{{
		name:   "arithmetic with NULLs",
		exprs:  []expr.Desc{expr.Func("+", in(0, i64), in(1, i64)), in(0, i64), expr.Func("*", in(1, i64), lit(int64(10), i64))},
		script: "barrier\n+ 1 2\n+ NULL 3\n- 4 NULL\nstop",
		want:   []string{"barrier 1", "+ 3 1 20\n+ NULL NULL 30\n- NULL 4 NULL", "barrier 2 stop"},
	}, {
		name:   "ops and visibility carried through",
		exprs:  []expr.Desc{expr.Func("-", in(1, i64), in(0, i64))},
		script: "barrier\nU- 1 5\nU+ 1 7\n+ 2 9 D\n- 3 3\nbarrier\n+ 10 20\nstop",
		want:   []string{"barrier 1", "U- 4\nU+ 6\n+ 7 D\n- 0", "barrier 2", "+ 10", "barrier 3 stop"},
	}, {
		// Only visible rows count: the hidden 5/0 is NULL but no error.
		name:      "row errors become NULL and are counted",
		exprs:     []expr.Desc{expr.Func("/", in(0, i64), in(1, i64))},
		script:    "barrier\n+ 6 3\n+ 1 0\n+ 5 0 D\n- 2 0\n+ NULL 0\nstop",
		want:      []string{"barrier 1", "+ 2\n+ NULL\n+ NULL D\n- NULL\n+ NULL", "barrier 2 stop"},
		rowErrors: 2,
	}, {
		name:      "overflow becomes NULL",
		exprs:     []expr.Desc{expr.Func("*", in(0, i64), in(1, i64))},
		script:    "barrier\n+ 9223372036854775807 2\n+ 3 3\nstop",
		want:      []string{"barrier 1", "+ NULL\n+ 9", "barrier 2 stop"},
		rowErrors: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := &stream.Env{Expr: &expr.Context{}}
			src := stream.NewMockSource(schema, streamtest.Script(schema, tc.script, 1, testActor)...)
			e, err := Build(env, nil, projectNode(tc.exprs...), []stream.Executor{src})
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, drain(t, context.Background(), e), tc.want)
			if got := env.Expr.RowErrors(); got != tc.rowErrors {
				t.Fatalf("row errors = %d, want %d", got, tc.rowErrors)
			}
		})
	}
}

// A projection that only reorders columns shares the input's columns and
// does not copy.
func TestProjectSharesInputColumns(t *testing.T) {
	schema := []types.Type{i64, str}
	c := types.MustParseChunk(schema, "+ 1 a\n+ 2 b")
	msg := firstOutput(t, projectNode(in(1, str), in(0, i64)), schema, stream.ChunkMsg(c))
	if msg.Chunk.Cols[0] != c.Cols[1] || msg.Chunk.Cols[1] != c.Cols[0] {
		t.Fatalf("projection copied its input columns")
	}
	if got := msg.Chunk.String(); got != "+ a 1\n+ b 2\n" {
		t.Fatalf("got %q", got)
	}
}

// A watermark survives on a column projected as is, under its new index,
// and is dropped on a column that is only used inside an expression.
func TestProjectWatermarks(t *testing.T) {
	schema := []types.Type{i64, i64}
	src := stream.NewMockSource(schema,
		stream.NewBarrier(1),
		stream.Message{Watermark: &stream.Watermark{Col: 0, Value: int64(5)}},
		stream.Message{Watermark: &stream.Watermark{Col: 1, Value: int64(7)}},
		stream.NewStopBarrier(2, testActor))
	e, err := Build(&stream.Env{}, nil, projectNode(expr.Func("+", in(0, i64), in(1, i64)), in(1, i64)), []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, drain(t, context.Background(), e), []string{"barrier 1", "watermark 1 7", "barrier 2 stop"})
}

// TestProjectDerivesWatermarks: an output monotone in a watermarked column
// (a constant added or subtracted, date_bin, date_trunc) gets the
// watermark's image; one decreasing in it (constant minus column) none.
func TestProjectDerivesWatermarks(t *testing.T) {
	ts := types.TTimestamp
	schema := []types.Type{i64, ts}
	hour := lit(types.DInterval{Micros: 3600_000_000}, types.TInterval)
	bin := expr.Func("date_bin", hour, in(1, ts), lit(types.DTimestamp(0), ts))
	bin.Type = ts
	plus := expr.Func("+", bin, hour)
	plus.Type = ts
	trunc := expr.Func("date_trunc", lit("day", types.TVarchar), in(1, ts))
	trunc.Type = ts
	src := stream.NewMockSource(schema,
		stream.NewBarrier(1),
		stream.Message{Watermark: &stream.Watermark{Col: 1, Value: types.DTimestamp(5400_000_000)}}, // 2000-01-01 01:30
		stream.Message{Watermark: &stream.Watermark{Col: 0, Value: int64(10)}},
		stream.NewStopBarrier(2, testActor))
	node := projectNode(bin, plus, trunc, expr.Func("-", lit(int64(100), i64), in(0, i64)), expr.Func("-", in(0, i64), lit(int64(1), i64)))
	e, err := Build(&stream.Env{}, nil, node, []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, drain(t, context.Background(), e), []string{"barrier 1",
		"watermark 0 3600000000", "watermark 1 7200000000", "watermark 2 0", // 01:00, 02:00, 00:00 in micros
		"watermark 4 9", "barrier 2 stop"})
}

func TestProjectZeroColumnsKeepsRows(t *testing.T) {
	schema := []types.Type{i64}
	src := stream.NewMockSource(schema, stream.NewBarrier(1),
		stream.ChunkMsg(types.NewChunk([]types.Column{types.ColumnOf(i64, int64(1), int64(2))}, nil)),
		stream.NewStopBarrier(2, testActor))
	e, err := Build(&stream.Env{}, nil, projectNode(), []stream.Executor{src})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, drain(t, context.Background(), e), []string{"barrier 1", "+\n+", "barrier 2 stop"})
}

func TestBuildErrors(t *testing.T) {
	schema := []types.Type{i64, str}
	src := func() []stream.Executor { return []stream.Executor{stream.NewMockSource(schema)} }
	cases := []struct {
		name   string
		n      *plan.Node
		inputs []stream.Executor
	}{
		{"nil node", nil, src()},
		{"unknown kind", &plan.Node{Kind: plan.KindHashAgg}, src()},
		{"project without body", &plan.Node{Kind: plan.KindProject}, src()},
		{"project bad column", projectNode(in(5, i64)), src()},
		{"project wrong type", projectNode(in(1, i64)), src()},
		{"project no input", projectNode(in(0, i64)), nil},
		{"project declared schema mismatch", &plan.Node{Kind: plan.KindProject, Schema: []types.Type{str}, Project: &plan.Project{Exprs: []expr.Desc{in(0, i64)}}}, src()},
		{"filter not boolean", filterNode(in(0, i64)), src()},
		{"filter unknown function", filterNode(expr.Func("no_such_fn", in(0, i64))), src()},
		{"filter two inputs", filterNode(lit(true, boo)), append(src(), src()...)},
		{"values with input", valuesNode(nil, []expr.Desc{lit(int64(1), i64)}), src()},
		{"values width mismatch", valuesNode(nil, []expr.Desc{lit(int64(1), i64)}, []expr.Desc{lit(int64(1), i64), lit(int64(2), i64)}), nil},
		{"values type mismatch", valuesNode([]types.Type{i64}, []expr.Desc{lit("x", str)}), nil},
		{"values bad untyped literal", valuesNode([]types.Type{i64}, []expr.Desc{{Kind: expr.KindLiteral, Value: ptr("x")}}), nil},
		{"union no inputs", unionNode(), nil},
		{"union schema mismatch", unionNode(), []stream.Executor{stream.NewMockSource(schema), stream.NewMockSource([]types.Type{i64, i64})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newTestGroup(t)
			if _, err := Build(&stream.Env{}, g, tc.n, tc.inputs); err == nil {
				t.Fatalf("Build succeeded")
			}
		})
	}
}

func ptr(s string) *string { return &s }

// passingSource is a mock source that records the take PassFresh gives it.
type passingSource struct {
	*stream.MockSource
	take func() bool
}

func (p *passingSource) PassFresh(take func() bool) { p.take = take }

// TestProjectPassesFreshOnlyAsIdentity: only a projection that keeps its
// input's columns in order hands fresh rows through, and one that changes
// them refuses fresh rows that reach it anyway.
func TestProjectPassesFreshOnlyAsIdentity(t *testing.T) {
	schema := []types.Type{i64, str}
	for _, tc := range []struct {
		exprs    []expr.Desc
		identity bool
	}{
		{[]expr.Desc{in(0, i64), in(1, str)}, true},
		{[]expr.Desc{in(1, str), in(0, i64)}, false},
		{[]expr.Desc{in(0, i64)}, false},
		{[]expr.Desc{in(0, i64), in(1, str), in(0, i64)}, false},
	} {
		src := &passingSource{MockSource: stream.NewMockSource(schema,
			stream.Message{Fresh: &stream.FreshRows{IDs: []int64{1}, Rows: storage.EncodedRows{Buf: []byte{0, 2, 0}, Spans: []uint32{0, 3}}}})}
		e, err := Build(&stream.Env{}, nil, projectNode(tc.exprs...), []stream.Executor{src})
		if err != nil {
			t.Fatal(err)
		}
		e.(stream.FreshPassing).PassFresh(func() bool { return true })
		if (src.take != nil) != tc.identity {
			t.Fatalf("%v: passed on %v, want %v", tc.exprs, src.take != nil, tc.identity)
		}
		msg, err := e.Next(context.Background())
		if tc.identity && (err != nil || msg.Fresh == nil) {
			t.Fatalf("%v: %v, %v; want the fresh rows", tc.exprs, msg, err)
		}
		if !tc.identity && err == nil {
			t.Fatalf("%v: fresh rows through a changing projection: %v", tc.exprs, msg)
		}
	}
}
