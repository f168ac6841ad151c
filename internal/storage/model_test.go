package storage

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// The model: rows keyed by "k/name" (name nil ≠ ""), committed state plus,
// per actor, sealed-uncommitted epochs and unsealed writes. Actor 0 owns the
// even vnodes, actor 1 the odd ones; every write goes to the owner of its
// row's vnode, as a hash dispatcher would send it.
type modelKey struct {
	k      int64
	name   string
	isNull bool
}

type modelWrite struct {
	row types.Row // nil = delete
}

type model struct {
	committed map[modelKey]types.Row
	staged    map[uint64][2]map[modelKey]modelWrite // epoch → per actor
	pending   [2]map[modelKey]modelWrite
	cur       uint64 // the epoch being written
	commitE   uint64
}

func newModel() *model {
	m := &model{committed: map[modelKey]types.Row{}, staged: map[uint64][2]map[modelKey]modelWrite{}, cur: 1}
	m.pending = [2]map[modelKey]modelWrite{{}, {}}
	return m
}

// view returns what actor a must read: committed, then its staged epochs in
// order, then its pending writes.
func (m *model) view(a int) map[modelKey]types.Row {
	out := map[modelKey]types.Row{}
	for mk, r := range m.committed {
		if int(vnodeOfK(mk.k)%2) == a {
			out[mk] = r
		}
	}
	epochs := slices.Sorted(maps.Keys(m.staged))
	layers := []map[modelKey]modelWrite{}
	for _, e := range epochs {
		layers = append(layers, m.staged[e][a])
	}
	layers = append(layers, m.pending[a])
	for _, l := range layers {
		for mk, w := range l {
			if w.row == nil {
				delete(out, mk)
			} else {
				out[mk] = w.row
			}
		}
	}
	return out
}

func keyOfRow(r types.Row) modelKey {
	mk := modelKey{k: r[0].(int64)}
	if r[1] == nil {
		mk.isNull = true
	} else {
		mk.name = r[1].(string)
	}
	return mk
}

// sortPK orders rows by (k ASC, name DESC NULLS FIRST): independent of the
// codec, so a scan's order is checked, not assumed.
func sortPK(rows []types.Row) {
	slices.SortFunc(rows, func(x, y types.Row) int {
		if c := cmp.Compare(x[0].(int64), y[0].(int64)); c != 0 {
			return c
		}
		switch {
		case x[1] == nil && y[1] == nil:
			return 0
		case x[1] == nil:
			return -1
		case y[1] == nil:
			return 1
		}
		return -cmp.Compare(x[1].(string), y[1].(string))
	})
}

func rowsString(rows []types.Row) string {
	return fmt.Sprint(rows)
}

func TestStateTableMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		// With ingestFrom 1 every seal writes its fresh keys (InsertAbsent's)
		// to a file the commit ingests; with 0 (the default size) to its batch.
		s := openIngest(t, vfs.NewMem(), rapid.SampledFrom([]int{0, 1}).Draw(rt, "ingestFrom"))
		desc := kvDesc(7)
		even, odd := evenOdd()
		bitmaps := [2]types.Bitmap{even, odd}
		var tables [2]*StateTable
		open := func(a int) {
			tables[a] = mustOpenTable(t, s, desc, ActorID(a+1), bitmaps[a])
		}
		open(0)
		open(1)
		m := newModel()

		genRow := func(rt *rapid.T) types.Row {
			k := rapid.Int64Range(0, 12).Draw(rt, "k")
			var name types.Datum
			if n := rapid.IntRange(0, 3).Draw(rt, "name"); n > 0 {
				name = []string{"", "a", "b"}[n-1]
			}
			return types.Row{k, name, rapid.Int64Range(0, 100).Draw(rt, "v")}
		}
		check := func(rt *rapid.T) {
			for a := range 2 {
				want := slices.Collect(maps.Values(m.view(a)))
				got := scanAll(t, tables[a], nil)
				sortPK(want)
				gotSorted := slices.Clone(got)
				sortPK(gotSorted)
				if rowsString(gotSorted) != rowsString(want) {
					rt.Fatalf("actor %d scan:\n got %v\nwant %v", a, gotSorted, want)
				}
			}
			// A prefix scan on k sees one vnode, in exact PK order.
			k := rapid.Int64Range(0, 12).Draw(rt, "scanK")
			a := int(vnodeOfK(k) % 2)
			var want []types.Row
			for mk, r := range m.view(a) {
				if mk.k == k {
					want = append(want, r)
				}
			}
			sortPK(want)
			got := scanAll(t, tables[a], types.Row{k})
			if rowsString(got) != rowsString(want) {
				rt.Fatalf("prefix scan k=%d:\n got %v\nwant %v", k, got, want)
			}
			// Snapshot reads see exactly the committed model.
			snap, err := s.Snapshot()
			if err != nil {
				rt.Fatal(err)
			}
			it, err := snap.ScanTable(ctx, desc)
			if err != nil {
				rt.Fatal(err)
			}
			gotC := drain(t, it)
			_ = snap.Close()
			wantC := slices.Collect(maps.Values(m.committed))
			sortPK(gotC)
			sortPK(wantC)
			if rowsString(gotC) != rowsString(wantC) {
				rt.Fatalf("snapshot:\n got %v\nwant %v", gotC, wantC)
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"insert": func(rt *rapid.T) {
				r := genRow(rt)
				a := int(vnodeOfK(r[0].(int64)) % 2)
				if err := tables[a].Insert(r); err != nil {
					rt.Fatal(err)
				}
				m.pending[a][keyOfRow(r)] = modelWrite{row: r}
			},
			"insertAbsent": func(rt *rapid.T) {
				r := genRow(rt)
				a := int(vnodeOfK(r[0].(int64)) % 2)
				if _, held := m.view(a)[keyOfRow(r)]; held {
					return // a writer calls InsertAbsent only for a key not held
				}
				if err := tables[a].InsertAbsent(r); err != nil {
					rt.Fatal(err)
				}
				m.pending[a][keyOfRow(r)] = modelWrite{row: r}
			},
			"delete": func(rt *rapid.T) {
				r := genRow(rt)
				a := int(vnodeOfK(r[0].(int64)) % 2)
				if err := tables[a].Delete(r); err != nil {
					rt.Fatal(err)
				}
				m.pending[a][keyOfRow(r)] = modelWrite{}
			},
			"deleteBetween": func(rt *rapid.T) {
				// What a watermark's cleaning does: delete the rows whose
				// first key column is in [lo, bound), seeing each first.
				a := rapid.IntRange(0, 1).Draw(rt, "actor")
				var lo types.Datum
				if rapid.Bool().Draw(rt, "fromStart") == false {
					lo = rapid.Int64Range(0, 12).Draw(rt, "lo")
				}
				bound := rapid.Int64Range(0, 13).Draw(rt, "bound")
				var want []types.Row
				for mk, r := range m.view(a) {
					if (lo == nil || mk.k >= lo.(int64)) && mk.k < bound {
						want = append(want, r)
					}
				}
				var got []types.Row
				err := tables[a].DeleteBetween(ctx, lo, bound, func(r types.Row) error {
					got = append(got, slices.Clone(r))
					return nil
				})
				if err != nil {
					rt.Fatal(err)
				}
				sortPK(want)
				sortPK(got)
				if rowsString(got) != rowsString(want) {
					rt.Fatalf("delete between %v and %d saw:\n got %v\nwant %v", lo, bound, got, want)
				}
				for _, r := range want {
					m.pending[a][keyOfRow(r)] = modelWrite{}
				}
			},
			"get": func(rt *rapid.T) {
				r := genRow(rt)
				a := int(vnodeOfK(r[0].(int64)) % 2)
				got, ok, err := tables[a].Get(ctx, r[:2])
				if err != nil {
					rt.Fatal(err)
				}
				want, wok := m.view(a)[keyOfRow(r)]
				if ok != wok || fmt.Sprint(got) != fmt.Sprint(want) {
					rt.Fatalf("get %v: got %v,%v want %v,%v", r[:2], got, ok, want, wok)
				}
			},
			"seal": func(rt *rapid.T) {
				for a := range 2 {
					if err := tables[a].Seal(m.cur); err != nil {
						rt.Fatal(err)
					}
				}
				m.staged[m.cur] = m.pending
				m.pending = [2]map[modelKey]modelWrite{{}, {}}
				m.cur++
			},
			"commit": func(rt *rapid.T) {
				if m.cur-1 <= m.commitE {
					rt.Skip("nothing sealed")
				}
				e := rapid.Uint64Range(m.commitE+1, m.cur-1).Draw(rt, "commitEpoch")
				if err := s.Commit(ctx, e, nil); err != nil {
					rt.Fatal(err)
				}
				for _, se := range slices.Sorted(maps.Keys(m.staged)) {
					if se > e {
						break
					}
					for a := range 2 {
						for mk, w := range m.staged[se][a] {
							if w.row == nil {
								delete(m.committed, mk)
							} else {
								m.committed[mk] = w.row
							}
						}
					}
					delete(m.staged, se)
				}
				m.commitE = e
			},
			"discardActor": func(rt *rapid.T) {
				a := rapid.IntRange(0, 1).Draw(rt, "actor")
				s.DiscardActor(ActorID(a + 1))
				for e, per := range m.staged {
					per[a] = map[modelKey]modelWrite{}
					m.staged[e] = per
				}
				m.pending[a] = map[modelKey]modelWrite{}
				open(a) // a discarded actor is rebuilt from committed state
				// The rebuilt actor must not seal an epoch already sealed.
				tables[a].lastSealed = m.cur - 1
			},
			"": check,
		})
	})
}
