package codec

import (
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// Stable hashing. The hash of a row decides which of the VNodeCount
// virtual nodes its state lives in, and that placement is persisted in
// state-store keys, so the function below is frozen: changing any constant,
// the per-column canonical bytes or the combination step moves every
// persisted row. TestHashGolden pins it.
//
// Each column's canonical bytes are its ascending NULLS LAST key encoding
// (marker byte + value), which already maps equal values (1.0 and 1.00,
// '1 day' and '24 hours', -0 and 0, every NaN, smallint 7 and bigint 7) to
// equal bytes. Each column is hashed alone with xxhash64, and the column
// hashes are folded in order into one accumulator and finalized with
// murmur3's fmix64. Hashing column by column is what lets HashColumns work a
// whole column at a time and still agree with HashRow bit for bit.

// VNodeCount is the number of virtual nodes data is distributed over.
const VNodeCount = 256

const (
	hashSeed   = 0x736c_7569_6365_0001 // "sluice", version 1
	hashPrime1 = 0x9E37_79B9_7F4A_7C15
)

// HashRow returns the stable hash of row, typed by ts. Rows whose datums
// compare equal column by column (types.Compare == 0) hash equal; NULL
// hashes as a fixed value. A datum of the wrong Go type for its column, or
// len(row) != len(ts), is a bug in the caller and panics: silently
// hashing it somewhere would route the row to the wrong vnode.
func HashRow(row types.Row, ts []types.Type) uint64 {
	if len(row) != len(ts) {
		panic(fmt.Sprintf("codec: HashRow of %d datums with %d types", len(row), len(ts)))
	}
	var scratch [64]byte
	h := uint64(hashSeed)
	for i, t := range ts {
		h = combineHash(h, hashDatum(scratch[:0], row[i], t))
	}
	return finishHash(h)
}

// VNodeOf maps a hash to its virtual node: hash % VNodeCount. The low bits
// are already well mixed because every hash goes through fmix64 last.
func VNodeOf(hash uint64) uint16 { return uint16(hash % VNodeCount) }

// HashColumns writes into out[i] the hash of columns cols of row i of c,
// for every row (visible or not), equal to HashRow of those datums with
// the columns' types. out is reused when it has room; the result has
// c.Capacity() entries.
func HashColumns(c *types.Chunk, cols []int, out []uint64) []uint64 {
	n := c.Capacity()
	if cap(out) < n {
		out = make([]uint64, n)
	}
	out = out[:n]
	for i := range out {
		out[i] = hashSeed
	}
	// One scratch buffer for every column: the per-type encoders are
	// called through func values, so a stack array would escape anyway.
	scratch := make([]byte, 0, 64)
	for _, ci := range cols {
		scratch = hashColumnInto(c.Cols[ci], out, scratch)
	}
	for i, h := range out {
		out[i] = finishHash(h)
	}
	return out
}

// HashInt64s is HashColumns of a chunk whose one column is a bigint
// column of ids: the hashes, and so the vnodes, of rows keyed and
// distributed by those ids.
func HashInt64s(ids []int64, out []uint64) []uint64 {
	col := &types.Vec[int64]{Typ: types.TInt64, Vals: ids}
	return HashColumns(types.NewChunk([]types.Column{col}, nil), []int{0}, out)
}

func combineHash(h, col uint64) uint64 {
	return bits.RotateLeft64((h^col)*hashPrime1, 31)
}

// finishHash is murmur3's fmix64 finalizer: every input bit reaches every
// output bit, so hash % VNodeCount is uniform.
func finishHash(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// hashDatum hashes one datum's canonical bytes, built in buf: the bytes of
// appendKeyColumn with Order{}, spelled out so that buf (HashRow's stack
// array) does not escape for scalar types.
func hashDatum(buf []byte, d types.Datum, t types.Type) uint64 {
	var err error
	switch {
	case d == nil:
		buf = append(buf, nullLastMarker)
	case t.ID == types.Array:
		// Array encoding recurses, so its buffer escapes: give it its own.
		buf, err = appendKeyColumn(nil, d, t, Order{})
	default:
		buf, err = appendKeyScalar(append(buf, valueMarker), d, t)
	}
	if err != nil {
		panic(fmt.Sprintf("codec: hashing: %v", err))
	}
	return xxhash.Sum64(buf)
}
