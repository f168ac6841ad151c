package codec

import (
	"github.com/cespare/xxhash/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// hashColumnInto folds the hash of every row of col into out. It switches
// on the column's SQL type once and then loops over the typed slice, so the
// per-row work is one small encode and one xxhash call with no boxing. A
// column whose Go type does not match its SQL type takes the generic path,
// which agrees with HashRow (and panics on the same bugs).
func hashColumnInto(col types.Column, out []uint64, scratch []byte) []byte {
	ok := false
	switch col.Type().ID {
	case types.Bool:
		ok = hashVec(col, out, &scratch, appendKeyBool)
	case types.Int16, types.Int32, types.Int64:
		ok = hashVec(col, out, &scratch, appendKeyInt)
	case types.Float32, types.Float64:
		ok = hashVec(col, out, &scratch, appendKeyFloat)
	case types.Decimal:
		ok = hashVec(col, out, &scratch, mustAppendKeyDecimal)
	case types.Varchar:
		ok = hashVec(col, out, &scratch, appendKeyString)
	case types.Bytea:
		ok = hashVec(col, out, &scratch, appendKeyBytes)
	case types.Date, types.Time, types.Timestamp, types.Timestamptz:
		ok = hashTemporal(col, out, &scratch)
	case types.Interval:
		ok = hashVec(col, out, &scratch, appendKeyInterval)
	}
	if !ok {
		hashGeneric(col, out)
	}
	return scratch
}

func hashTemporal(col types.Column, out []uint64, scratch *[]byte) bool {
	switch col.Type().ID {
	case types.Date:
		return hashVec(col, out, scratch, func(b []byte, v types.DDate) []byte { return appendKeyInt(b, int64(v)) })
	case types.Time:
		return hashVec(col, out, scratch, func(b []byte, v types.DTime) []byte { return appendKeyInt(b, int64(v)) })
	case types.Timestamp:
		return hashVec(col, out, scratch, func(b []byte, v types.DTimestamp) []byte { return appendKeyInt(b, int64(v)) })
	default:
		return hashVec(col, out, scratch, func(b []byte, v types.DTimestamptz) []byte { return appendKeyInt(b, int64(v)) })
	}
}

// hashVec hashes a *types.Vec[T] with enc writing one value's ascending
// encoding; it reports false when col is not a *types.Vec[T].
func hashVec[T any](col types.Column, out []uint64, scratch *[]byte, enc func([]byte, T) []byte) bool {
	v, ok := col.(*types.Vec[T])
	if !ok {
		return false
	}
	buf := *scratch
	defer func() { *scratch = buf[:0] }() // keep any growth for the next column
	nullHash := xxhash.Sum64([]byte{nullLastMarker})
	for i, x := range v.Vals {
		if v.Nulls.Get(i) {
			out[i] = combineHash(out[i], nullHash)
			continue
		}
		buf = enc(append(buf[:0], valueMarker), x)
		out[i] = combineHash(out[i], xxhash.Sum64(buf))
	}
	return true
}

func hashGeneric(col types.Column, out []uint64) {
	var scratch [64]byte
	t := col.Type()
	for i := range out {
		out[i] = combineHash(out[i], hashDatum(scratch[:0], col.Get(i), t))
	}
}

func mustAppendKeyDecimal(dst []byte, d *decimal) []byte {
	if d == nil {
		panic("codec: hashing a nil *apd.Decimal")
	}
	dst, err := appendKeyDecimal(dst, d)
	if err != nil {
		panic("codec: hashing: " + err.Error())
	}
	return dst
}
