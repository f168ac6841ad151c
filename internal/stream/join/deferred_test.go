package join

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// recordingTable is a stateTable that records the writes and reads it is
// given.
type recordingTable struct {
	stateTable // nil: any other method panics
	log        []string
}

func (r *recordingTable) InsertAbsent(row types.Row) error {
	r.log = append(r.log, fmt.Sprint("insert ", row[0]))
	return nil
}

func (r *recordingTable) Delete(row types.Row) error {
	r.log = append(r.log, fmt.Sprint("delete ", row[0]))
	return nil
}

func (r *recordingTable) Scan(context.Context, types.Row) (rowIterator, error) {
	r.log = append(r.log, "scan")
	return nil, nil
}

func (r *recordingTable) Seal(epoch uint64) error {
	r.log = append(r.log, fmt.Sprint("seal ", epoch))
	return nil
}

// TestDeferredTable: inserts wait for the seal or a read; a dropped row is
// never written; a tag from before a write-out drops nothing (its row is
// in the table, and its position now holds another row), and the delete
// of such a row goes to the table.
func TestDeferredTable(t *testing.T) {
	rec := &recordingTable{}
	d := newDeferredTable(rec)
	insert := func(id int64) int64 {
		t.Helper()
		if err := d.InsertAbsent(types.Row{id}); err != nil {
			t.Fatal(err)
		}
		return d.lastTag()
	}
	a, b := insert(1), insert(2)
	if !d.drop(b) {
		t.Fatal("drop of a listed row: false")
	}
	if _, err := d.Scan(context.Background(), nil); err != nil { // writes 1 out
		t.Fatal(err)
	}
	c := insert(3) // the position a had
	if d.drop(a) {
		t.Fatal("a tag from before the write-out dropped a row")
	}
	if err := d.Delete(types.Row{int64(1)}); err != nil { // what expiry does next
		t.Fatal(err)
	}
	insert(4)
	if !d.drop(c) {
		t.Fatal("drop of a listed row: false")
	}
	if err := d.Seal(7); err != nil {
		t.Fatal(err)
	}
	if d.drop(c) {
		t.Fatal("a tag from before the seal dropped a row")
	}
	want := "[insert 1 scan delete 1 insert 4 seal 7]"
	if got := fmt.Sprint(rec.log); got != want {
		t.Errorf("table saw %s, want %s", got, want)
	}
}
