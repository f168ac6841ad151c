package join

import (
	"strings"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// The join's amplification, for metrics: how many rows each probe row
// matched, and the keys that matched the most. A stuck barrier is most
// often one join key matching a huge number of rows; a user must see
// which join and which key within seconds. The counts gather here, per
// row without a lock, and go to the actor's stream.JoinStats at each
// barrier; a probe row still running long reports its key as it goes,
// since its barrier may not come for minutes.

// heavyMin is the fewest matches of one probe row that make its key a
// heavy-key candidate.
const heavyMin = 64

// rotateEvery is how many barriers a period of heavy keys lasts.
const rotateEvery = 30

type ampCounter struct {
	stats    *stream.JoinStats // nil: not counted
	keyTypes [2][]types.Type   // of each side's join key
	buckets  [stream.AmpBuckets]uint64
	sum      uint64
	heavy    []stream.HeavyKey
	barriers int
	// actor holds the job's amplification limit (ActorStats.AmpLimit);
	// over it, onOver hears of the row once (the guard). Both nil in
	// tests.
	actor  *stream.ActorStats
	id     stream.ActorID
	onOver func(actor stream.ActorID, key string, matches int64) bool
}

// limit is the job's amplification limit (0: none).
func (a *ampCounter) limit() int64 {
	if a.actor == nil {
		return 0
	}
	return a.actor.AmpLimit.Load()
}

// guard reports t to onOver the first time its matches pass the job's
// limit.
func (a *ampCounter) guard(t *rowTask) {
	if a.onOver == nil || a.actor == nil || t.overLimit {
		return
	}
	if lim := a.actor.AmpLimit.Load(); lim > 0 && t.count > lim {
		t.overLimit = a.onOver(a.id, keyString(t.key, a.keyTypes[t.side]), t.count)
	}
}

// finished counts a probe row that has matched all its rows.
func (a *ampCounter) finished(t *rowTask) {
	a.guard(t)
	if a.stats == nil {
		return
	}
	a.buckets[stream.AmpBucket(t.count)]++
	a.sum += uint64(t.count)
	if t.count >= heavyMin && stream.Qualifies(a.heavy, t.count) {
		a.heavy = stream.KeepHeavy(a.heavy, stream.HeavyKey{Key: keyString(t.key, a.keyTypes[t.side]), Matches: t.count})
	}
}

// running reports a probe row that has matched many rows and is not done
// (it returns an output chunk): each time its matches double past
// heavyMin, its key goes to the stats at once.
func (a *ampCounter) running(t *rowTask) {
	a.guard(t)
	if a.stats == nil || t.count < heavyMin || t.count < 2*t.reported {
		return
	}
	t.reported = t.count
	a.stats.Add(&[stream.AmpBuckets]uint64{}, 0, []stream.HeavyKey{{Key: keyString(t.key, a.keyTypes[t.side]), Matches: t.count}})
}

// barrier hands the epoch's counts to the stats.
func (a *ampCounter) barrier() {
	if a.stats == nil {
		return
	}
	a.stats.Add(&a.buckets, a.sum, a.heavy)
	a.buckets, a.sum, a.heavy = [stream.AmpBuckets]uint64{}, 0, a.heavy[:0]
	if a.barriers++; a.barriers%rotateEvery == 0 {
		a.stats.Rotate()
	}
}

// keyString shows a join key as a user would write its values.
func keyString(key types.Row, ts []types.Type) string {
	var b strings.Builder
	for i, d := range key {
		if i > 0 {
			b.WriteString(", ")
		}
		if d == nil || i >= len(ts) {
			b.WriteString("NULL")
			continue
		}
		b.WriteString(types.FormatDatum(d, ts[i]))
	}
	return b.String()
}
