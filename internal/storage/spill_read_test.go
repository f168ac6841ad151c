package storage

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// TestSpillReadsBackInOrder: the seal's reader of a spill returns every
// record, in order, with its key and value, whatever the block it reads
// at a time (records crossing blocks, longer than a block), and stops at
// the spill's length in a longer pooled file.
func TestSpillReadsBackInOrder(t *testing.T) {
	defer func(n int) { rawBlock = n }(rawBlock)
	rapid.Check(t, func(rt *rapid.T) {
		rawBlock = rapid.IntRange(1, 300).Draw(rt, "block")
		s := openSpillStore(t)
		tbl := mustOpenTable(t, s, rowIDDesc(9), 1, nil)
		b := types.NewBuilder(tbl.Desc().Types, 201)
		var rows []int
		for i := range rapid.IntRange(1, 200).Draw(rt, "rows") {
			v := strings.Repeat("y", rapid.IntRange(0, 700).Draw(rt, "len"))
			b.Append(types.Insert, types.Row{v, int64(i*3 + 1)})
			rows = append(rows, i)
		}
		if ok, err := tbl.InsertFresh(b.Take(), rows); !ok || err != nil {
			rt.Fatalf("InsertFresh: %v %v", ok, err)
		}
		todo := []*freshChunk{&tbl.fresh[0]}
		order := freshSortedOrder(todo)
		sf, err := tbl.writeRawSpill("/spill", todo, order)
		if err != nil {
			rt.Fatal(err)
		}
		if rapid.Bool().Draw(rt, "longer") { // a pooled file goes on past the spill
			f, err := s.fs.OpenReadWrite("/spill", vfs.WriteCategoryUnspecified)
			if err == nil {
				_, err = f.WriteAt([]byte("garbage past the spill"), sf.size)
				err = f.Close()
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		src, err := tbl.rawSpillSource(sf)
		if err != nil {
			rt.Fatal(err)
		}
		defer src.close()
		for i, r := range order {
			fc := todo[r.chunk]
			want := tbl.appendFreshKey(nil, fc, r.k)
			if src.done() || !bytes.Equal(src.key(), want) || !bytes.Equal(src.value(), fc.vals.row(r.k)) {
				rt.Fatalf("record %d: key %x value %d bytes (done %v), want %x, %d bytes", i, src.key(), len(src.value()), src.done(), want, len(fc.vals.row(r.k)))
			}
			if err := src.next(); err != nil {
				rt.Fatal(err)
			}
		}
		if !src.done() {
			rt.Fatal(fmt.Sprintf("a record past the spill's %d: key %x", len(order), src.key()))
		}
	})
}

// TestSpillReaderDoesNotAllocatePerRecord: reading a spill's records
// reuses the source's key buffer and hands values out in place.
func TestSpillReaderDoesNotAllocatePerRecord(t *testing.T) {
	s := openSpillStore(t)
	tbl := mustOpenTable(t, s, rowIDDesc(9), 1, nil)
	insertFreshRange(t, tbl, 1, 2001)
	todo := []*freshChunk{&tbl.fresh[0]}
	sf, err := tbl.writeRawSpill("/spill", todo, freshSortedOrder(todo))
	if err != nil {
		t.Fatal(err)
	}
	src, err := tbl.rawSpillSource(sf)
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	allocs := testing.AllocsPerRun(1000, func() {
		if err := src.next(); err != nil || src.done() {
			t.Fatalf("next: %v (done %v)", err, src.done())
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations a record, want none", allocs)
	}
}
