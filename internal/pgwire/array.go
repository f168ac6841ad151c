package pgwire

import (
	"encoding/binary"
	"fmt"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Array types on the wire. Each element type has its own array type OID
// (pg_type.typarray); the binary form is array_send's: dimension count,
// has-NULL flag, element OID, then per dimension its length and lower
// bound, then each element as a length-prefixed binary value (-1 for
// NULL). Sluice arrays have one dimension with lower bound 1; an empty
// array has zero dimensions, as in Postgres.

// Array type OIDs.
const (
	OIDBoolArray        uint32 = 1000
	OIDByteaArray       uint32 = 1001
	OIDCharArray        uint32 = 1002
	OIDNameArray        uint32 = 1003
	OIDInt2Array        uint32 = 1005
	OIDInt4Array        uint32 = 1007
	OIDTextArray        uint32 = 1009
	OIDBpcharArray      uint32 = 1014
	OIDVarcharArray     uint32 = 1015
	OIDInt8Array        uint32 = 1016
	OIDFloat4Array      uint32 = 1021
	OIDFloat8Array      uint32 = 1022
	OIDOidArray         uint32 = 1028
	OIDTimestampArray   uint32 = 1115
	OIDDateArray        uint32 = 1182
	OIDTimeArray        uint32 = 1183
	OIDTimestamptzArray uint32 = 1185
	OIDIntervalArray    uint32 = 1187
	OIDNumericArray     uint32 = 1231
)

// arrayOIDs maps an element type to the OID of its array type.
var arrayOIDs = map[types.ID]uint32{
	types.Bool:        OIDBoolArray,
	types.Int16:       OIDInt2Array,
	types.Int32:       OIDInt4Array,
	types.Int64:       OIDInt8Array,
	types.Float32:     OIDFloat4Array,
	types.Float64:     OIDFloat8Array,
	types.Decimal:     OIDNumericArray,
	types.Varchar:     OIDVarcharArray,
	types.Bytea:       OIDByteaArray,
	types.Date:        OIDDateArray,
	types.Time:        OIDTimeArray,
	types.Timestamp:   OIDTimestampArray,
	types.Timestamptz: OIDTimestamptzArray,
	types.Interval:    OIDIntervalArray,
}

// arrayElemOIDs maps every array OID a client may use to its element OID
// (text[] and varchar[] both carry Sluice's varchar).
var arrayElemOIDs = map[uint32]uint32{
	OIDBoolArray: OIDBool, OIDByteaArray: OIDBytea, OIDCharArray: OIDChar, OIDNameArray: OIDName,
	OIDInt2Array: OIDInt2, OIDInt4Array: OIDInt4, OIDTextArray: OIDText, OIDBpcharArray: OIDBpchar,
	OIDVarcharArray: OIDVarchar, OIDInt8Array: OIDInt8, OIDFloat4Array: OIDFloat4,
	OIDFloat8Array: OIDFloat8, OIDOidArray: OIDOid, OIDTimestampArray: OIDTimestamp,
	OIDDateArray: OIDDate, OIDTimeArray: OIDTime, OIDTimestamptzArray: OIDTimestamptz,
	OIDIntervalArray: OIDInterval, OIDNumericArray: OIDNumeric,
}

// arrayOIDOf returns the OID of array type t (unknown if none).
func arrayOIDOf(t types.Type) uint32 {
	if oid, ok := arrayOIDs[t.Elem]; ok {
		return oid
	}
	return OIDUnknown
}

// arrayTypeOfOID returns the Sluice array type of an array OID.
func arrayTypeOfOID(oid uint32) (types.Type, bool) {
	elem, ok := arrayElemOIDs[oid]
	if !ok {
		return types.Type{}, false
	}
	t, ok := oidTypes[elem]
	return types.ArrayOf(t), ok
}

// appendBinaryArray appends array_send's form of a, an array sent as oid.
func appendBinaryArray(dst []byte, a types.DArray, oid uint32) ([]byte, error) {
	elemOID, ok := arrayElemOIDs[oid]
	if !ok {
		return dst, fmt.Errorf("pgwire: OID %d is not an array type", oid)
	}
	hasNull := uint32(0)
	for _, e := range a {
		if e == nil {
			hasNull = 1
		}
	}
	ndim := uint32(1)
	if len(a) == 0 {
		ndim = 0
	}
	dst = binary.BigEndian.AppendUint32(dst, ndim)
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, elemOID)
	if ndim == 1 {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(a)))
		dst = binary.BigEndian.AppendUint32(dst, 1)
	}
	for _, e := range a {
		if e == nil {
			dst = binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = appendBinary(dst, e, elemOID); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// decodeBinaryArray reads array_recv's input for an array of type t.
func decodeBinaryArray(b []byte, t types.Type) (types.Datum, error) {
	r := binReader{b: b}
	ndim, flags, _ := r.u32(), r.u32(), r.u32()
	if r.bad || ndim > 1 || flags > 1 {
		return nil, errArrayBinary(ndim)
	}
	n := uint32(0)
	if ndim == 1 {
		n = r.u32()
		if lb := r.u32(); r.bad || lb != 1 && n > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays with a lower bound other than 1 are not supported")
		}
	}
	if uint64(n)*4 > uint64(len(r.b)) {
		return nil, errArrayBinary(ndim)
	}
	out := make(types.DArray, n)
	for i := range out {
		l := r.u32()
		if r.bad {
			return nil, errArrayBinary(ndim)
		}
		if l == 0xFFFFFFFF {
			continue
		}
		v := r.bytes(l)
		if r.bad {
			return nil, errArrayBinary(ndim)
		}
		d, err := decodeBinary(v, t.ElemType())
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	if len(r.b) != 0 {
		return nil, errArrayBinary(ndim)
	}
	return out, nil
}

func errArrayBinary(ndim uint32) error {
	if ndim > 1 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
	}
	return sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format in array")
}

// binReader reads big-endian fields, remembering a short read.
type binReader struct {
	b   []byte
	bad bool
}

func (r *binReader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *binReader) bytes(n uint32) []byte {
	if uint64(n) > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
