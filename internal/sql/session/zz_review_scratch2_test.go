package session

import (
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

func TestReviewScratchLocks(t *testing.T) {
	defer func(n int) { copyPieceRows = n }(copyPieceRows)
	copyPieceRows = 100
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	c2 := connect(t, p)
	run := func(sql string) { t.Logf("c1 %-100s => %s", sql, rvTag(c, sql)) }
	run2 := func(sql string) { t.Logf("c2 %-100s => %s", sql, rvTag(c2, sql)) }
	q := func(sql string) { t.Logf("c1 %-100s => %s", sql, rvQ(c, sql)) }
	q("SELECT 'a'::char(3) = 'a  '::char(3), length('a  '::char(3)), octet_length('a'::char(3))")
	run("CREATE TABLE chp (x char(3) PRIMARY KEY)")
	run("INSERT INTO chp VALUES ('a')")
	run("INSERT INTO chp VALUES ('a  ')")

	for _, end := range []string{"ROLLBACK", "COMMIT"} {
		for _, bulk := range []bool{false, true} {
			run("DROP TABLE IF EXISTS lk")
			run("CREATE TABLE lk (a int, b text, v text, PRIMARY KEY (a, b))")
			run2("BEGIN")
			if bulk {
				run2("INSERT INTO lk SELECT g, 'k', 'c2' FROM generate_series(1, 500) g")
			} else {
				run2("INSERT INTO lk VALUES (5, 'k', 'c2')")
			}
			done := make(chan string)
			go func() {
				done <- rvTag(c, "INSERT INTO lk SELECT g % 1000, 'k', 'c1' FROM generate_series(1, 3000) g ON CONFLICT DO NOTHING")
			}()
			select {
			case r := <-done:
				t.Logf("c1 did not wait: %s", r)
				run2(end)
			case <-time.After(500 * time.Millisecond):
				run2(end)
				t.Logf("c1 waited, then (after c2 %s): %s", end, <-done)
			}
			q("SELECT v, count(*) FROM lk GROUP BY v ORDER BY v")
		}
	}
	// Block deleting a committed key
	run("DROP TABLE IF EXISTS lk")
	run("CREATE TABLE lk (a int, b text, v text, PRIMARY KEY (a, b))")
	run("INSERT INTO lk VALUES (5, 'k', 'old')")
	run2("BEGIN")
	run2("DELETE FROM lk WHERE a = 5")
	done := make(chan string)
	go func() {
		done <- rvTag(c, "INSERT INTO lk SELECT g % 10, 'k', 'c1' FROM generate_series(1, 300) g ON CONFLICT DO NOTHING")
	}()
	select {
	case r := <-done:
		t.Logf("c1 did not wait (delete): %s", r)
		run2("COMMIT")
	case <-time.After(500 * time.Millisecond):
		run2("COMMIT")
		t.Logf("c1 waited (delete): %s", <-done)
	}
	q("SELECT v, count(*) FROM lk GROUP BY v ORDER BY v")
}
