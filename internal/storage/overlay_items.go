package storage

// itemLog holds an overlay's unsealed writes in write order, a write's
// position being its index. Past the first itemPage items it grows by
// whole pages, so a bulk epoch's million writes are never copied to make
// room: growing one slice copied them (pointers, with the collector's
// write barriers) and cleared each new array, a fifth of the CPU of
// BenchmarkBulkMultisetEpoch (1.25 against 1.00 cpu-s/op with the slice
// sized in advance). The first page grows like a slice, so a table with a
// few writes an epoch holds a few items, not a page; every other page is
// made whole.
type itemLog struct {
	pages [][]overlayItem
	n     int
}

const (
	itemPageBits = 12
	itemPage     = 1 << itemPageBits // items per page (160 KiB)
)

func (l *itemLog) len() int { return l.n }

// at returns the item at position i.
func (l *itemLog) at(i int32) *overlayItem {
	return &l.pages[i>>itemPageBits][i&(itemPage-1)]
}

// add appends it and returns its position.
func (l *itemLog) add(it overlayItem) int32 {
	p := l.n >> itemPageBits
	if p == len(l.pages) {
		c := itemPage
		if p == 0 {
			c = 0 // the first page grows by append, up to itemPage items
		}
		l.pages = append(l.pages, make([]overlayItem, 0, c))
	}
	l.pages[p] = append(l.pages[p], it)
	l.n++
	return int32(l.n - 1)
}

// capacity is the items the log holds room for.
func (l *itemLog) capacity() int {
	c := 0
	for _, page := range l.pages {
		c += cap(page)
	}
	return c
}

// reset forgets every item (clearing them for the collector) and keeps
// the pages that fit in room for keep items: a huge epoch's pages go once
// epochs are small again.
func (l *itemLog) reset(keep int) {
	kept, room := 0, 0
	for _, page := range l.pages {
		if room+cap(page) > keep {
			break
		}
		room += cap(page)
		clear(page)
		l.pages[kept] = page[:0]
		kept++
	}
	clear(l.pages[kept:])
	l.pages = l.pages[:kept]
	l.n = 0
}
