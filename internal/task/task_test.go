package task

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPanicBecomesError(t *testing.T) {
	g, ctx := NewGroup(context.Background())
	g.Go(ctx, "boom", func(context.Context) error { panic("kaboom") })
	g.Go(ctx, "waiter", func(ctx context.Context) error { <-ctx.Done(); return nil })
	err := g.Wait()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Name != "boom" {
		t.Fatalf("want PanicError from boom, got %v", err)
	}
}

func TestFirstErrorWins(t *testing.T) {
	g, ctx := NewGroup(context.Background())
	first := errors.New("first")
	g.Go(ctx, "a", func(context.Context) error { return first })
	g.Go(ctx, "b", func(ctx context.Context) error { <-ctx.Done(); return errors.New("second") })
	if err := g.Wait(); !errors.Is(err, first) {
		t.Fatalf("got %v", err)
	}
}

func TestIdle(t *testing.T) {
	g, ctx := NewGroup(context.Background())
	select {
	case <-g.Idle():
	default:
		t.Fatal("an empty group is not idle")
	}
	release := make(chan struct{})
	g.Go(ctx, "blocked", func(context.Context) error { <-release; return nil })
	idle := g.Idle()
	select {
	case <-idle:
		t.Fatal("idle while a goroutine runs")
	default:
	}
	close(release)
	<-idle
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
