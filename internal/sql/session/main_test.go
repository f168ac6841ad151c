package session

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sluice-db/sluice/internal/engine"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startPlayground runs an in-memory engine and server for one test.
func startPlayground(t *testing.T) *Playground {
	t.Helper()
	return startPlaygroundWith(t, engine.Options{BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 64})
}

func startPlaygroundWith(t *testing.T, opts engine.Options) *Playground {
	t.Helper()
	// A view's input is checked in tests, and so is a primary-key table's:
	// its materialize trusts every statement to have read its keys.
	opts.CheckInserts = true
	return startPlaygroundAs(t, opts)
}

// startTrustedPlayground is startPlaygroundWith with the playground's own
// setting: views and primary-key tables trust their input
// (CheckInserts off), and keep bulk inserts as fresh runs.
func startTrustedPlayground(t *testing.T, opts engine.Options) *Playground {
	t.Helper()
	opts.CheckInserts = false
	return startPlaygroundAs(t, opts)
}

func startPlaygroundAs(t *testing.T, opts engine.Options) *Playground {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	p, err := StartPlayground(ctx, opts, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if n := p.Engine.InconsistentOps(); n != 0 {
			t.Errorf("%d changes contradicted a view's or a primary-key table's stored rows (see the log)", n)
		}
	})
	return p
}

func connect(t *testing.T, p *Playground) *pgx.Conn {
	t.Helper()
	return connectWith(t, p, nil)
}

// connectWith connects with a notice handler (nil: notices are dropped).
func connectWith(t *testing.T, p *Playground, onNotice func(*pgconn.Notice)) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(p.Server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if onNotice != nil {
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { onNotice(n) }
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
