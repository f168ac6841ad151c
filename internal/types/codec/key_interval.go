package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/sluice-db/sluice/internal/types"
)

// Interval keys are the 128-bit normalized span from types.IntervalSpan
// (months as 30 days, days as 24 hours), high half sign-flipped, both
// halves big-endian: 16 bytes whose order is the span's order, so
// '1 day' and '24 hours' encode identically.

func appendKeyInterval(dst []byte, v types.DInterval) []byte {
	hi, lo := types.IntervalSpan(v)
	dst = binary.BigEndian.AppendUint64(dst, uint64(hi)^signBit)
	return binary.BigEndian.AppendUint64(dst, lo)
}

func (r *keyReader) interval() (any, error) {
	h, err := r.uint64()
	if err != nil {
		return nil, err
	}
	lo, err := r.uint64()
	if err != nil {
		return nil, err
	}
	return intervalFromSpan(int64(h^signBit), lo)
}

const microsPerMonth = uint64(types.DaysPerMonth * types.MicrosPerDay)

// intervalFromSpan returns the canonical interval of a span: as many whole
// months as fit in an int32, then as many whole days, then microseconds, all
// with the span's sign. Every span that a real interval produces has such a
// form (clamping months or days only pushes the excess into the next field,
// which held at least that much in the original); a span that does not is
// corrupt.
func intervalFromSpan(hi int64, lo uint64) (types.DInterval, error) {
	neg := hi < 0
	uhi, ulo := uint64(hi), lo
	if neg { // two's complement negate the 128-bit value
		uhi, ulo = ^uhi, ^ulo+1
		if ulo == 0 {
			uhi++
		}
	}
	// A negative field may reach one further than a positive one.
	limit32, limit64 := uint64(math.MaxInt32), uint64(math.MaxInt64)
	if neg {
		limit32, limit64 = limit32+1, limit64+1
	}
	months, uhi, ulo, ok := takeUnits(uhi, ulo, microsPerMonth, limit32)
	if !ok {
		return types.DInterval{}, fmt.Errorf("%w: interval span out of range", ErrCorrupt)
	}
	days, uhi, ulo, ok := takeUnits(uhi, ulo, uint64(types.MicrosPerDay), limit32)
	if !ok || uhi != 0 || ulo > limit64 {
		return types.DInterval{}, fmt.Errorf("%w: interval span out of range", ErrCorrupt)
	}
	v := types.DInterval{Months: int32(months), Days: int32(days), Micros: int64(ulo)}
	if neg {
		v = types.DInterval{Months: int32(-int64(months)), Days: int32(-int64(days)), Micros: int64(-ulo)}
	}
	return v, nil
}

// takeUnits removes min(span/unit, limit) whole units from the unsigned
// 128-bit span and returns how many it took and what remains.
func takeUnits(hi, lo, unit, limit uint64) (n, rhi, rlo uint64, ok bool) {
	if hi >= unit {
		return 0, 0, 0, false
	}
	q, _ := bits.Div64(hi, lo, unit)
	n = min(q, limit)
	phi, plo := bits.Mul64(n, unit)
	rlo, borrow := bits.Sub64(lo, plo, 0)
	rhi, _ = bits.Sub64(hi, phi, borrow)
	return n, rhi, rlo, true
}
