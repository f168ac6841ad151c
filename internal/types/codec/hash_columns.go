package codec

import (
	"github.com/cespare/xxhash/v2"
	"github.com/sluice-db/sluice/internal/types"
	"math/bits"
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
		ok = hashInts(col, out)
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

// hashInts is hashVec with appendKeyInt for a *types.Vec[int64], with
// xxhash64 of the nine bytes (valueMarker, the value's big-endian key)
// worked out inline: a bulk load hashes every row id twice (to route the
// row, then to key it), and the general path's call through a func value
// and its byte buffer cost 30 ms a million rows.
func hashInts(col types.Column, out []uint64) bool {
	v, ok := col.(*types.Vec[int64])
	if !ok {
		return false
	}
	nullHash := xxhash.Sum64([]byte{nullLastMarker})
	for i, x := range v.Vals {
		if v.Nulls.Get(i) {
			out[i] = combineHash(out[i], nullHash)
			continue
		}
		out[i] = combineHash(out[i], xxhashIntKey(x))
	}
	return true
}

// xxh64's primes.
const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

// xxhashIntKey is xxhash.Sum64 of appendKeyInt([]byte{valueMarker}, v),
// xxh64 (seed 0) of nine bytes: one 8-byte lane, one tail byte. The lane
// is the bytes read little-endian: the marker, then the key's first seven
// bytes; the tail is the key's last byte.
func xxhashIntKey(v int64) uint64 {
	u := uint64(v) ^ signBit
	lane := valueMarker | bits.ReverseBytes64(u)<<8
	h := xxPrime5 + 9
	h ^= bits.RotateLeft64(lane*xxPrime2, 31) * xxPrime1
	h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	h ^= (u & 0xff) * xxPrime5
	h = bits.RotateLeft64(h, 11) * xxPrime1
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
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
