package storage

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestLRUMatchesModel drives an LRU and a slice model (most recent first)
// with random operations: every lookup, eviction and length must agree,
// which pins down the recency order the intrusive list keeps.
func TestLRUMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.IntRange(1, 5).Draw(rt, "capacity")
		c := NewLRU[string, int](capacity)
		var evicted, wantEvicted []string
		c.OnEvict(func(k string, v int) { evicted = append(evicted, fmt.Sprintf("%s=%d", k, v)) })
		type kv struct {
			k string
			v int
		}
		var model []kv // most recently used first
		find := func(k string) int { return slices.IndexFunc(model, func(e kv) bool { return e.k == k }) }
		touch := func(i int) kv {
			e := model[i]
			model = slices.Insert(slices.Delete(model, i, i+1), 0, e)
			return e
		}
		for range rapid.IntRange(1, 60).Draw(rt, "ops") {
			k := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "f", "g"}).Draw(rt, "key")
			switch op := rapid.IntRange(0, 4).Draw(rt, "op"); op {
			case 0, 1: // Get, GetBytes
				var v int
				var ok bool
				if op == 0 {
					v, ok = c.Get(k)
				} else {
					v, ok = GetBytes(c, []byte(k))
				}
				want, wantOK := 0, false
				if i := find(k); i >= 0 {
					want, wantOK = touch(i).v, true
				}
				if v != want || ok != wantOK {
					rt.Fatalf("get %s = %d,%v, want %d,%v", k, v, ok, want, wantOK)
				}
			case 2: // Put
				v := rapid.IntRange(0, 99).Draw(rt, "val")
				c.Put(k, v)
				if i := find(k); i >= 0 {
					touch(i)
					model[0].v = v
					break
				}
				model = slices.Insert(model, 0, kv{k, v})
				if len(model) > capacity {
					old := model[len(model)-1]
					model = model[:len(model)-1]
					wantEvicted = append(wantEvicted, fmt.Sprintf("%s=%d", old.k, old.v))
				}
			case 3: // Delete
				i := find(k)
				if got := c.Delete(k); got != (i >= 0) {
					rt.Fatalf("delete %s = %v", k, got)
				}
				if i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
			case 4:
				if rapid.IntRange(0, 9).Draw(rt, "clear") == 0 {
					c.Clear()
					model = nil
				}
			}
			if c.Len() != len(model) {
				rt.Fatalf("len %d, want %d", c.Len(), len(model))
			}
			if !slices.Equal(evicted, wantEvicted) {
				rt.Fatalf("evicted %v, want %v", evicted, wantEvicted)
			}
		}
	})
}

// BenchmarkLRUGetHit is an executor cache hit (the path of every probe of a
// hot key): a lookup by the encoded key's bytes in a full cache.
func BenchmarkLRUGetHit(b *testing.B) {
	const n = 1 << 16
	c := NewLRU[string, *int](n)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%08d", i)
		c.Put(string(keys[i]), &i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := GetBytes(c, keys[i%n]); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkLRUPutEvict is an executor cache miss in a full cache: the new
// entry evicts the least recently used one.
func BenchmarkLRUPutEvict(b *testing.B) {
	const n = 1 << 10
	c := NewLRU[int, int](n)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Put(i, i)
	}
}
