package agg

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
)

// runUntil pulls e until the barrier of epoch and returns its output.
func runUntil(t *testing.T, e stream.Executor, epoch uint64) string {
	t.Helper()
	out := ""
	for {
		msg, err := e.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if msg.Chunk != nil {
			out += msg.Chunk.String()
		}
		if msg.Barrier != nil {
			out += "barrier\n"
			if msg.Barrier.Epoch == epoch {
				return out
			}
		}
	}
}

func TestAggRecovery(t *testing.T) {
	in := tsch(i32, i32)
	calls := []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, i64, 1), ac(plan.AggMin, i32, 1)}
	cases := []struct {
		name          string
		groups        []int
		first, second string // outputs of the first and the rebuilt run
	}{
		{
			name:   "hash",
			groups: []int{0},
			first:  "barrier\n+ 1 2 30 10\nbarrier\nU- 1 2 30 10\nU+ 1 3 35 5\nbarrier\n",
			second: "barrier\nU- 1 2 30 10\nU+ 1 1 20 20\nbarrier\n",
		},
		{
			name:   "simple",
			first:  "barrier\n+ 2 30 10\nbarrier\nU- 2 30 10\nU+ 3 35 5\nbarrier\n",
			second: "barrier\nU- 2 30 10\nU+ 1 20 20\nbarrier\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := streamtest.OpenStore(t)
			node := func() *plan.Agg { return planAgg(in, tc.groups, cloneCalls(calls), 1) }
			src := stream.NewMockSource(in, script(in, "barrier\n+ 1 10\n+ 1 20\nbarrier\n+ 1 5\nbarrier", 1)...)
			a, err := NewAgg(testEnv(st, 1), src, node())
			if err != nil {
				t.Fatal(err)
			}
			if got := runUntil(t, a, 3); got != tc.first {
				t.Fatalf("first run:\n%s\nwant:\n%s", got, tc.first)
			}
			// Epoch 2 commits; epoch 3 (+ 1 5) is lost in the crash.
			if err := st.Commit(context.Background(), 2, nil); err != nil {
				t.Fatal(err)
			}
			st.AbortUncommitted()
			src = stream.NewMockSource(in, script(in, "barrier\n- 1 10\nstop", 4)...)
			a, err = NewAgg(testEnv(st, 1), src, node())
			if err != nil {
				t.Fatal(err)
			}
			if got := drain(t, a); got != tc.second {
				t.Fatalf("after recovery:\n%s\nwant:\n%s", got, tc.second)
			}
		})
	}
}

func TestDistinctRecovery(t *testing.T) {
	in := tsch(i32)
	st := streamtest.OpenStore(t)
	src := stream.NewMockSource(in, script(in, "barrier\n+ 1\n+ 1\n+ 2\nbarrier\n- 1\n- 2\nbarrier", 1)...)
	d, err := NewDistinct(testEnv(st, 1), src, planDistinct(in, []int{0}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runUntil(t, d, 3), "barrier\n+ 1\n+ 2\nbarrier\n- 2\nbarrier\n"; got != want {
		t.Fatalf("first run:\n%s\nwant:\n%s", got, want)
	}
	if err := st.Commit(context.Background(), 2, nil); err != nil {
		t.Fatal(err)
	}
	st.AbortUncommitted()
	// Committed: 1 twice, 2 once. Deleting 1 once and 2 once drops only 2.
	src = stream.NewMockSource(in, script(in, "barrier\n- 1\n- 2\nbarrier\n- 1\nstop", 4)...)
	d, err = NewDistinct(testEnv(st, 1), src, planDistinct(in, []int{0}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := drain(t, d), "barrier\n- 2\nbarrier\n- 1\nbarrier\n"; got != want {
		t.Fatalf("after recovery:\n%s\nwant:\n%s", got, want)
	}
}
