package topn

import "fmt"

// Over an input that only inserts (plan.TopN.AppendOnlyInput) a row can
// only move down the ranks of its group, never up: nothing ahead of it
// ever leaves. So a row ranked after the window's last row (and not its
// peer, under WITH TIES) will never be emitted. Such a row is not stored
// when it arrives, and rows the chunk pushed out of the window are
// deleted after it: the table holds each group's low part and window,
// Nexmark q9's top bid per auction instead of every bid. Nothing changes
// for recovery: the committed rows' top-N is still the output.

// beyond reports whether en, arriving now, ranks after the group's full
// window. The cache holds at least the window's rows (windowOf made it
// reach them before the chunk, and inserts only add to it).
func (s spec) beyond(c *groupCache, en entry) bool {
	end := s.end()
	if len(c.rows) < end {
		return false // the window is not full: en enters it
	}
	last := c.rows[end-1]
	if en.key <= last.key {
		return false
	}
	return !s.withTies || !peers(last, en)
}

// evict deletes the group's cached rows ranked after window w from the
// table and the cache.
func (e *Executor) evict(c *groupCache, w window) error {
	if !e.spec.appendOnly || w.empty() || w.hi.inf {
		return nil
	}
	i, _ := c.search(w.hi.key)
	if i+1 >= len(c.rows) {
		return nil
	}
	for _, r := range c.rows[i+1:] {
		if err := e.table.Delete(r.row); err != nil {
			return fmt.Errorf("topn: evict: %w", err)
		}
	}
	clear(c.rows[i+1:])
	c.rows = c.rows[:i+1]
	return nil
}
