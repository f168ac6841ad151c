package storage

// LRU is a bounded cache that evicts the least recently used entry.
// Executors put one in front of a StateTable (join key → rows, group key →
// aggregate state) so hot keys skip the store. Capacity counts entries. An
// LRU is not safe for concurrent use: it belongs to one actor.
//
// It is on every executor's per-row path, so it links its own nodes (no
// container/list elements and interface assertions), reuses an evicted
// node for the entry that evicts it, and a string-keyed one can be looked
// up by a key's bytes without copying them (GetBytes).
type LRU[K comparable, V any] struct {
	capacity int
	index    map[K]*lruNode[K, V]
	// root is the sentinel of a circular list: root.next is the most
	// recently used node, root.prev the least.
	root    lruNode[K, V]
	onEvict func(K, V)
}

type lruNode[K comparable, V any] struct {
	key        K
	val        V
	prev, next *lruNode[K, V]
}

// NewLRU returns an LRU holding at most capacity entries (at least 1).
func NewLRU[K comparable, V any](capacity int) *LRU[K, V] {
	c := &LRU[K, V]{capacity: max(capacity, 1), index: make(map[K]*lruNode[K, V])}
	c.root.prev, c.root.next = &c.root, &c.root
	return c
}

// OnEvict sets a function called with each entry evicted for capacity (not
// for Delete), for example to count evictions.
func (c *LRU[K, V]) OnEvict(f func(K, V)) { c.onEvict = f }

// Get returns the value for key and marks it most recently used.
func (c *LRU[K, V]) Get(key K) (V, bool) {
	return c.hit(c.index[key])
}

// GetBytes is Get on a string-keyed LRU by the key's bytes: a map index by
// string(key) does not copy them, so a probe with an encoded key held in a
// scratch buffer allocates nothing.
func GetBytes[V any](c *LRU[string, V], key []byte) (V, bool) {
	return c.hit(c.index[string(key)])
}

// hit marks n (nil = a miss) most recently used and returns its value.
func (c *LRU[K, V]) hit(n *lruNode[K, V]) (V, bool) {
	if n == nil {
		var zero V
		return zero, false
	}
	c.moveToFront(n)
	return n.val, true
}

// Put sets the value for key, evicting the least recently used entry when
// the cache is full.
func (c *LRU[K, V]) Put(key K, val V) {
	if n, ok := c.index[key]; ok {
		n.val = val
		c.moveToFront(n)
		return
	}
	var (
		n       *lruNode[K, V]
		evicted bool
		oldK    K
		oldV    V
	)
	if len(c.index) >= c.capacity {
		n = c.root.prev
		c.unlink(n)
		delete(c.index, n.key)
		evicted, oldK, oldV = true, n.key, n.val
	} else {
		n = &lruNode[K, V]{}
	}
	n.key, n.val = key, val
	c.index[key] = n
	c.pushFront(n)
	// Called last, as before nodes were reused: the cache is consistent
	// again when the callback runs.
	if evicted && c.onEvict != nil {
		c.onEvict(oldK, oldV)
	}
}

// Delete removes key; it reports whether it was present.
func (c *LRU[K, V]) Delete(key K) bool {
	n, ok := c.index[key]
	if !ok {
		return false
	}
	c.unlink(n)
	delete(c.index, key)
	return true
}

// Cap returns the most entries the cache holds.
func (c *LRU[K, V]) Cap() int { return c.capacity }

// Len returns the number of entries.
func (c *LRU[K, V]) Len() int { return len(c.index) }

// Clear removes every entry (after recovery, caches must be rebuilt).
func (c *LRU[K, V]) Clear() {
	c.root.prev, c.root.next = &c.root, &c.root
	clear(c.index)
}

func (c *LRU[K, V]) moveToFront(n *lruNode[K, V]) {
	if c.root.next != n {
		c.unlink(n)
		c.pushFront(n)
	}
}

func (c *LRU[K, V]) unlink(n *lruNode[K, V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}

func (c *LRU[K, V]) pushFront(n *lruNode[K, V]) {
	n.prev, n.next = &c.root, c.root.next
	n.next.prev = n
	c.root.next = n
}
