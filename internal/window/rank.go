package window

import (
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// rank computes the ranking functions for rows from … to-1.
func rank(p Partition, c plan.WindowCall, from, to int, col func(int, types.Datum)) error {
	n := p.Len()
	switch c.Kind {
	case plan.WindowRowNumber:
		for i := from; i < to; i++ {
			col(i, int64(i+1))
		}
	case plan.WindowRank, plan.WindowPercentRank:
		start := groupStart(p, from)
		for i := from; i < to; i++ {
			if i > 0 && !p.Peers(i-1, i) {
				start = i
			}
			if c.Kind == plan.WindowRank {
				col(i, int64(start+1))
			} else if n == 1 {
				col(i, float64(0))
			} else {
				col(i, float64(start)/float64(n-1))
			}
		}
	case plan.WindowDenseRank:
		dense := int64(0)
		for i := 0; i < to; i++ {
			if i == 0 || !p.Peers(i-1, i) {
				dense++
			}
			if i >= from {
				col(i, dense)
			}
		}
	case plan.WindowCumeDist:
		end := -1
		for i := from; i < to; i++ {
			if i > end {
				end = groupEnd(p, i)
			}
			col(i, float64(end+1)/float64(n))
		}
	case plan.WindowNtile:
		if c.Offset <= 0 {
			return allNull(from, to, col, sqlerr.New(sqlerr.InvalidArgumentForNtile, "argument of ntile must be greater than zero"))
		}
		for i := from; i < to; i++ {
			col(i, ntile(int64(i), int64(n), c.Offset))
		}
	}
	return nil
}

// ntile is the bucket (from 1) of row i of n in k buckets as even as can
// be, the first n mod k one row larger.
func ntile(i, n, k int64) int64 {
	q, r := n/k, n%k
	if i < r*(q+1) {
		return i/(q+1) + 1
	}
	return r + (i-r*(q+1))/q + 1
}
