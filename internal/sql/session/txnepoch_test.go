package session

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestTransactionInOneEpoch: a transaction block writing two tables is
// seen by a view over both all at once, in one epoch: a full join of the
// tables on the key every transaction inserts into both never shows a key
// on one side only, while blocks commit concurrently and barriers pass
// every few milliseconds.
func TestTransactionInOneEpoch(t *testing.T) {
	p := startPlayground(t)
	setup := connect(t, p)
	exec(t, setup, "CREATE TABLE a (k int PRIMARY KEY)")
	exec(t, setup, "CREATE TABLE b (k int PRIMARY KEY)")
	exec(t, setup, "CREATE MATERIALIZED VIEW ab AS SELECT a.k AS ak, b.k AS bk FROM a FULL JOIN b ON a.k = b.k")
	const writers, perWriter = 4, 40
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		c := connect(t, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				k := w*perWriter + i
				tx, err := c.Begin(ctx)
				if err == nil {
					_, err = tx.Exec(ctx, fmt.Sprintf("INSERT INTO a VALUES (%d)", k))
				}
				if err == nil {
					_, err = tx.Exec(ctx, fmt.Sprintf("INSERT INTO b VALUES (%d)", k))
				}
				if err == nil {
					err = tx.Commit(ctx)
				}
				if err != nil {
					errs <- fmt.Errorf("block %d: %w", k, err)
					return
				}
			}
		}()
	}
	reader := connect(t, p)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	checks := 0
	for finished := false; !finished; checks++ {
		select {
		case <-done:
			finished = true
		default:
		}
		var half int64
		if err := reader.QueryRow(ctx, "SELECT count(*) FROM ab WHERE ak IS NULL OR bk IS NULL").Scan(&half); err != nil {
			t.Fatal(err)
		}
		if half != 0 {
			t.Fatalf("check %d: the view shows %d keys of a transaction on one side only", checks, half)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	exec(t, setup, "FLUSH")
	wantRows(t, setup, "SELECT count(*) FROM ab WHERE ak = bk", fmt.Sprint(writers*perWriter))
	t.Logf("%d checks of the view while %d blocks committed", checks, writers*perWriter)
}
