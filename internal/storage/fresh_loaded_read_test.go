package storage

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestLoadedRowsReadByVNode: each of two actors splitting the vnodes reads
// exactly its own rows of a loaded file, in key order, one vnode a call
// (so ids rise within a call), whatever the batch size; together they
// read every row once, with its value.
func TestLoadedRowsReadByVNode(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 300)
	ts := []types.Type{types.TVarchar, types.TInt64}
	var all []int64
	for a, batch := range []int{7, 1000} {
		tbl := mustOpenTable(t, s, desc, ActorID(a+1), alternateVNodes(a))
		if _, err := tbl.ReadLoaded(f); err == nil {
			t.Fatal("ReadLoaded before AddLoaded did not fail")
		}
		if err := tbl.AddLoaded(f); err != nil {
			t.Fatal(err)
		}
		rd, err := tbl.ReadLoaded(f)
		if err != nil {
			t.Fatal(err)
		}
		var mine []int64
		lastVNode := -1
		for {
			ids, rows, err := rd.Next(batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) == 0 {
				break
			}
			first := int(codec.VNodeOf(codec.HashInt64s(ids[:1], nil)[0]))
			for k, id := range ids {
				v := int(codec.VNodeOf(codec.HashInt64s([]int64{id}, nil)[0]))
				if v != first || k > 0 && id <= ids[k-1] {
					t.Fatalf("actor %d read ids %v in one call: of vnodes %d and %d, or not rising", a, ids, first, v)
				}
				if v%2 != a || v < lastVNode {
					t.Fatalf("actor %d read id %d of vnode %d after vnode %d", a, id, v, lastVNode)
				}
				lastVNode = v
				row, err := codec.DecodeValue(rows.Buf[rows.Spans[2*k]:rows.Spans[2*k+1]], ts)
				if err != nil || row[0] != fmt.Sprint("v", id) || row[1] != id {
					t.Fatalf("row of id %d: %v %v", id, row, err)
				}
			}
			mine = append(mine, ids...)
		}
		var want int64
		for _, v := range tbl.owned {
			want += f.Counts[v]
		}
		if int64(len(mine)) != want {
			t.Fatalf("actor %d read %d rows, its vnodes hold %d", a, len(mine), want)
		}
		all = append(all, mine...)
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(all)
	if len(all) != 300 || all[0] != 1 || all[299] != 300 || len(slices.Compact(all)) != 300 {
		t.Fatalf("the actors read %d rows (%v…), want ids 1..300 once", len(all), all[:min(5, len(all))])
	}
}
