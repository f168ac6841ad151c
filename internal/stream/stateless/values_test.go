package stateless

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

func valuesNode(schema []types.Type, rows ...[]expr.Desc) *plan.Node {
	return &plan.Node{Kind: plan.KindValues, Schema: schema, Values: &plan.Values{Rows: rows}}
}

// inbox returns a barrier inbox preloaded with barriers for the epochs,
// the last one stopping testActor.
func inbox(epochs ...uint64) chan *stream.Barrier {
	ch := make(chan *stream.Barrier, len(epochs))
	for i, e := range epochs {
		msg := stream.NewBarrier(e)
		if i == len(epochs)-1 {
			msg = stream.NewStopBarrier(e, testActor)
		}
		ch <- msg.Barrier
	}
	return ch
}

func TestValues(t *testing.T) {
	row := func(ds ...expr.Desc) []expr.Desc { return ds }
	cases := []struct {
		name      string
		node      *plan.Node
		chunkSize int
		want      []string
		rowErrors uint64
	}{{
		name: "rows once after the first barrier",
		node: valuesNode(nil,
			row(lit(int64(1), i64), lit("a", str)),
			row(lit(int64(2), i64), expr.Null(str))),
		want: []string{"barrier 1", "+ 1 a\n+ 2 NULL", "barrier 2", "barrier 3", "barrier 4 stop"},
	}, {
		name: "chunked",
		node: valuesNode([]types.Type{i64},
			row(lit(int64(1), i64)), row(lit(int64(2), i64)), row(lit(int64(3), i64))),
		chunkSize: 2,
		want:      []string{"barrier 1", "+ 1\n+ 2", "+ 3", "barrier 2", "barrier 3", "barrier 4 stop"},
	}, {
		name: "expressions, untyped literals and row errors",
		node: valuesNode([]types.Type{i64, i64},
			row(expr.Func("+", lit(int64(1), i64), lit(int64(2), i64)), expr.Desc{Kind: expr.KindLiteral, Value: ptr("42")}),
			row(expr.Func("/", lit(int64(1), i64), lit(int64(0), i64)), expr.Desc{Kind: expr.KindLiteral})),
		want:      []string{"barrier 1", "+ 3 42\n+ NULL NULL", "barrier 2", "barrier 3", "barrier 4 stop"},
		rowErrors: 1,
	}, {
		name: "no rows",
		node: valuesNode([]types.Type{i64}),
		want: []string{"barrier 1", "barrier 2", "barrier 3", "barrier 4 stop"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := &stream.Env{Expr: &expr.Context{}, Barriers: inbox(1, 2, 3, 4), ChunkSize: tc.chunkSize}
			e, err := Build(env, nil, tc.node, nil)
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

// With no barrier in its inbox, values blocks until cancelled; a closed
// inbox is an error.
func TestValuesWaitsForBarrier(t *testing.T) {
	env := &stream.Env{Barriers: make(chan *stream.Barrier)}
	e, err := Build(env, nil, valuesNode(nil, []expr.Desc{lit(int64(1), i64)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v, want deadline exceeded", err)
	}

	closed := make(chan *stream.Barrier)
	close(closed)
	e, err = Build(&stream.Env{Barriers: closed}, nil, valuesNode(nil, []expr.Desc{lit(int64(1), i64)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Next(context.Background()); !errors.Is(err, ErrBarrierInboxClosed) {
		t.Fatalf("Next = %v, want ErrBarrierInboxClosed", err)
	}
}
