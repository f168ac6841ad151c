package overwindow

import (
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/types"
)

// partition is one partition's rows in window order (a window.Partition).
type partition struct {
	ents []entry
}

func (p *partition) Len() int            { return len(p.ents) }
func (p *partition) Row(i int) types.Row { return p.ents[i].row }

// Peers reports whether rows i and j tie on every ORDER BY column.
func (p *partition) Peers(i, j int) bool {
	a, b := &p.ents[i], &p.ents[j]
	return a.peerLen == b.peerLen && a.key[:a.peerLen] == b.key[:b.peerLen]
}

// search returns where key is (or would be) and whether it is there.
func (p *partition) search(key string) (int, bool) {
	return slices.BinarySearchFunc(p.ents, key, func(e entry, k string) int { return strings.Compare(e.key, k) })
}

// insert adds e in order, replacing a row of the same key (which the
// returned entry holds; ok reports one was there).
func (p *partition) insert(e entry) (old entry, ok bool) {
	i, found := p.search(e.key)
	if found {
		old, p.ents[i] = p.ents[i], e
		return old, true
	}
	p.ents = slices.Insert(p.ents, i, e)
	return entry{}, false
}

// remove deletes the row of key and returns it.
func (p *partition) remove(key string) (entry, bool) {
	i, found := p.search(key)
	if !found {
		return entry{}, false
	}
	e := p.ents[i]
	p.ents = slices.Delete(p.ents, i, i+1)
	return e, true
}

// peerStart and peerEnd widen a position to the ends of its peer group.
func (p *partition) peerStart(i int) int {
	for i > 0 && p.Peers(i-1, i) {
		i--
	}
	return i
}

func (p *partition) peerEnd(i int) int {
	for i+1 < len(p.ents) && p.Peers(i, i+1) {
		i++
	}
	return i
}
