package storage

import "container/list"

// LRU is a bounded cache that evicts the least recently used entry.
// Executors put one in front of a StateTable (join key → rows, group key →
// aggregate state) so hot keys skip the store. Capacity counts entries. An
// LRU is not safe for concurrent use: it belongs to one actor.
type LRU[K comparable, V any] struct {
	capacity int
	order    *list.List // front = most recently used; elements hold *lruEntry
	index    map[K]*list.Element
	onEvict  func(K, V)
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

// NewLRU returns an LRU holding at most capacity entries (at least 1).
func NewLRU[K comparable, V any](capacity int) *LRU[K, V] {
	return &LRU[K, V]{
		capacity: max(capacity, 1),
		order:    list.New(),
		index:    make(map[K]*list.Element),
	}
}

// OnEvict sets a function called with each entry evicted for capacity (not
// for Delete), for example to count evictions.
func (c *LRU[K, V]) OnEvict(f func(K, V)) { c.onEvict = f }

// Get returns the value for key and marks it most recently used.
func (c *LRU[K, V]) Get(key K) (V, bool) {
	e, ok := c.index[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

// Put sets the value for key, evicting the least recently used entry when
// the cache is full.
func (c *LRU[K, V]) Put(key K, val V) {
	if e, ok := c.index[key]; ok {
		e.Value.(*lruEntry[K, V]).val = val
		c.order.MoveToFront(e)
		return
	}
	c.index[key] = c.order.PushFront(&lruEntry[K, V]{key: key, val: val})
	if c.order.Len() > c.capacity {
		c.evictOldest()
	}
}

func (c *LRU[K, V]) evictOldest() {
	e := c.order.Back()
	ent := e.Value.(*lruEntry[K, V])
	c.order.Remove(e)
	delete(c.index, ent.key)
	if c.onEvict != nil {
		c.onEvict(ent.key, ent.val)
	}
}

// Delete removes key; it reports whether it was present.
func (c *LRU[K, V]) Delete(key K) bool {
	e, ok := c.index[key]
	if !ok {
		return false
	}
	c.order.Remove(e)
	delete(c.index, key)
	return true
}

// Len returns the number of entries.
func (c *LRU[K, V]) Len() int { return c.order.Len() }

// Clear removes every entry (after recovery, caches must be rebuilt).
func (c *LRU[K, V]) Clear() {
	c.order.Init()
	clear(c.index)
}
