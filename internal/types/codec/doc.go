// Package codec turns rows into bytes for the state store and for data
// distribution: memcomparable keys, compact values and a stable hash.
//
// The flow, step by step:
//
//  1. A state table's primary key is written with EncodeKey. Each column is
//     a marker byte (NULL first 0x00, value 0x01, NULL last 0x02 — chosen
//     after DESC so NULL placement is exactly Order.NullsFirst) followed,
//     for a value, by its ascending encoding, every byte inverted for DESC.
//     Every value encoding is canonical (values that types.Compare calls
//     equal give equal bytes) and prefix-free (no encoding is a prefix of
//     another), which is what makes bytes.Compare of whole keys equal the
//     SQL order column by column, makes inversion a correct DESC, and makes
//     the key of the first k columns a byte prefix of the full key.
//  2. The ascending encodings: integers of every width and the date/time
//     types as 8 big-endian bytes with the sign bit flipped; floats as
//     order-transformed IEEE bits with -0 folded into 0 and every NaN into
//     one NaN above +Infinity; bool as one byte; varchar and bytea with 0x00
//     escaped as 0x00 0xFF and terminated by 0x00 0x01; interval as its
//     128-bit span (types.IntervalSpan); numeric as a tag (-Inf, negative,
//     zero, positive, +Inf, NaN), an order-preserving varint exponent and
//     base-100 digit pairs, trailing zeros dropped (key_decimal.go); an
//     array as 0x01 + element or 0x02 for a NULL element, ended by 0x00, so
//     arrays order element-wise with NULL elements last, then shorter first
//     (key_array.go).
//  3. DecodeKey reverses a key, giving back the normalized value where the
//     order is coarser than the representation: 1.00 → 1, -0 → 0, '24
//     hours' → '1 day', any NaN → the canonical NaN. Whatever must round
//     trip exactly is also stored in the row's value.
//  4. The row itself is written with EncodeValue: a null bitmap, then each
//     non-NULL column in a compact form (zigzag varints, length-prefixed
//     strings, raw float bits, numeric as form/sign/exponent/coefficient,
//     arrays as a count, an element null bitmap and the elements).
//     DecodeValue round-trips exactly and rejects every malformed input
//     with an error wrapping ErrCorrupt; it never panics and never aliases
//     its input. DecodeValueInto (or a ColumnDecoder, which also carves a
//     chunk's numerics from shared slabs) decodes the same bytes straight
//     into typed column vectors, and EncodeValueColumns encodes a row of
//     columns, so rebuilding a chunk from stored rows boxes no datum
//     (value_columns.go).
//  5. Rows are spread over VNodeCount virtual nodes by HashRow (one row) or
//     HashColumns (a whole chunk, column at a time, bit-identical to
//     HashRow); VNodeOf picks the vnode. The hash is xxhash64 of each
//     column's ascending key bytes, folded in column order and finished with
//     fmix64 (hash.go). It is persisted through the keys it places, so it
//     must never change; TestHashGolden pins it.
//
// The property tests run rapid's default 100 cases; run them harder with
// go test ./internal/types/codec -rapid.checks=20000, and the fuzz targets
// with go test -fuzz=FuzzDecodeKey (or FuzzDecodeValue, FuzzKeyRoundTrip).
package codec
