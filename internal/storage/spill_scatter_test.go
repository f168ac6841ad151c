package storage

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// TestScatteredSpillEqualsGathered: a spill written by reading the chunks
// in stored order (spill_scatter.go) is the same file, byte for byte, with
// the same marks, as one written in key order by gathering the rows, for
// tables keyed by a bigint row id and by a varchar, with values longer
// than a vnode's buffer, and over a pooled file longer than the spill.
func TestScatteredSpillEqualsGathered(t *testing.T) {
	defer func(n int) { rawMarkEvery = n }(rawMarkEvery)
	rapid.Check(t, func(rt *rapid.T) {
		rawMarkEvery = rapid.IntRange(1, 70).Draw(rt, "markEvery")
		s := openSpillStore(t)
		byKey := rapid.Bool().Draw(rt, "byKey")
		desc := rowIDDesc(7)
		if byKey {
			desc = TableDesc{ID: 7, Types: []types.Type{types.TVarchar, types.TInt64}, PK: []int{0}, DistKey: []int{0}}
		}
		tbl := mustOpenTable(t, s, desc, 1, nil)
		next := rapid.Int64Range(-1000, 1000).Draw(rt, "first")
		for c := range rapid.IntRange(1, 5).Draw(rt, "chunks") {
			b := types.NewBuilder(desc.Types, 301)
			var rows []int
			for i := range rapid.IntRange(1, 300).Draw(rt, fmt.Sprint("rows", c)) {
				next += rapid.Int64Range(1, 3).Draw(rt, "gap")
				long := rapid.IntRange(0, 40).Draw(rt, "long") == 0
				n := rapid.IntRange(0, 200).Draw(rt, "len")
				if long {
					n = rapid.IntRange(scatterBuf-30, 3*scatterBuf).Draw(rt, "longLen")
				}
				v := strings.Repeat("x", n)
				if byKey {
					b.Append(types.Insert, types.Row{fmt.Sprintf("k%08d", next+5000) + v, next})
				} else {
					b.Append(types.Insert, types.Row{v, next})
				}
				rows = append(rows, i)
			}
			if ok, err := tbl.InsertFresh(b.Take(), rows); !ok || err != nil {
				rt.Fatalf("InsertFresh: %v %v", ok, err)
			}
		}
		var todo []*freshChunk
		for i := range tbl.fresh {
			todo = append(todo, &tbl.fresh[i])
		}
		if !storedInKeyOrder(todo) {
			rt.Fatal("rising keys not found stored in key order")
		}
		want, err := tbl.writeRawSpill("/gathered", todo, freshSortedOrder(todo))
		if err != nil {
			rt.Fatal(err)
		}
		if rapid.Bool().Draw(rt, "pooled") { // a longer file written over
			f, err := s.fs.Create("/scattered", vfs.WriteCategoryUnspecified)
			if err == nil {
				_, err = f.Write(make([]byte, want.size+100))
				err = f.Close()
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		got, err := tbl.writeRawSpillScattered("/scattered", todo)
		if err != nil {
			rt.Fatal(err)
		}
		if got.size != want.size || !slices.Equal(got.marks, want.marks) {
			rt.Fatalf("size %d marks %v, want %d %v", got.size, got.marks, want.size, want.marks)
		}
		if g, w := readPrefix(rt, s.fs, got.path, got.size), readPrefix(rt, s.fs, want.path, want.size); string(g) != string(w) {
			rt.Fatalf("scattered spill differs from the gathered one (%d bytes)", len(w))
		}
	})
}

func readPrefix(t *rapid.T, fs vfs.FS, path string, n int64) []byte {
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		t.Fatal(err)
	}
	return buf
}

// openSpillStore opens a store on an in-memory filesystem whose tables
// spill only when a test calls a spill writer, with its ingest directory
// made.
func openSpillStore(t testing.TB) *Store {
	t.Helper()
	s := openIngest(t, vfs.NewMem(), 1)
	s.spillFrom = 1 << 40
	if err := s.makeDir(s.ingestDir, &s.ingestDirMade); err != nil {
		t.Fatal(err)
	}
	return s
}
