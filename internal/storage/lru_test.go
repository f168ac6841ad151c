package storage

import "testing"

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewLRU[string, int](2)
	var evicted []string
	c.OnEvict(func(k string, _ int) { evicted = append(evicted, k) })
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 { // a is now most recent
		t.Fatalf("get a = %v,%v", v, ok)
	}
	c.Put("c", 3) // evicts b
	if _, ok := c.Get("b"); ok {
		t.Fatal("b survived eviction")
	}
	if len(evicted) != 1 || evicted[0] != "b" {
		t.Fatalf("evicted = %v", evicted)
	}
	c.Put("a", 10) // update, no eviction
	if v, _ := c.Get("a"); v != 10 || c.Len() != 2 {
		t.Fatalf("after update a=%v len=%d", v, c.Len())
	}
	if !c.Delete("a") || c.Delete("a") || c.Len() != 1 {
		t.Fatal("delete")
	}
	c.Clear()
	if c.Len() != 0 {
		t.Fatal("clear")
	}
}
