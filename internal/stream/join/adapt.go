package join

// A side's cache pays on every row stored and removed (a map lookup, an
// entry kept in order, a new key's entry while the side is complete) and
// earns only on probes of the side. Nexmark q7 stores every bid by price
// and probes the bids only when a window's maximum price changes, a few
// times an epoch: the cache's upkeep was 12 % of the CPU and saved a
// handful of state-table scans. So a side that has stored more than
// uncacheAbove rows per probe of it in the epoch so far (and at least
// adaptMinStores) drops its cache and is probed from the state table as a
// large key is; at a barrier it caches again if the epoch's probes came at
// least one per recacheBelow stores. The cache only ever speeds reads up,
// so dropping it changes no result: a probe in progress holds its own
// slice of an entry's rows, and nothing writes to a dropped entry.

const (
	uncacheAbove = 64
	recacheBelow = 32
	// defaultAdaptMinStores is the fewest rows an epoch must store in a
	// side before its cache can be dropped: below it the upkeep is small,
	// and the probes may not have started yet.
	defaultAdaptMinStores = 1 << 16
)

// noteStore counts a row stored in the side and drops the cache once the
// epoch's stores show it is not worth its upkeep.
func (s *side) noteStore() {
	s.stores++
	if !s.uncached && s.stores >= s.adaptMinStores && s.stores > uncacheAbove*s.probes {
		s.uncached, s.complete = true, false
		s.cache.Clear()
	}
}

// endEpochCache starts the next epoch's counts, caching again if the
// epoch that ends probed the side often enough.
func (s *side) endEpochCache() {
	if s.uncached && s.stores < recacheBelow*s.probes {
		s.uncached = false
	}
	s.stores, s.probes = 0, 0
}
