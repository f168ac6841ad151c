package pgwire

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Postgres type OIDs (pg_type.oid) of the types Sluice speaks.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDChar        uint32 = 18
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDOid         uint32 = 26
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDBpchar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDNumeric     uint32 = 1700
)

var typeOIDs = map[types.ID]uint32{
	types.Unknown:     OIDUnknown,
	types.Bool:        OIDBool,
	types.Int16:       OIDInt2,
	types.Int32:       OIDInt4,
	types.Int64:       OIDInt8,
	types.Float32:     OIDFloat4,
	types.Float64:     OIDFloat8,
	types.Decimal:     OIDNumeric,
	types.Varchar:     OIDVarchar,
	types.Bytea:       OIDBytea,
	types.Date:        OIDDate,
	types.Time:        OIDTime,
	types.Timestamp:   OIDTimestamp,
	types.Timestamptz: OIDTimestamptz,
	types.Interval:    OIDInterval,
}

// oidTypes maps the OIDs a client may declare for a parameter to the type
// its value is decoded as.
var oidTypes = map[uint32]types.Type{
	0:              types.TUnknown,
	OIDUnknown:     types.TUnknown,
	OIDBool:        types.TBool,
	OIDInt2:        types.TInt16,
	OIDInt4:        types.TInt32,
	OIDInt8:        types.TInt64,
	OIDOid:         types.TInt64,
	OIDFloat4:      types.TFloat32,
	OIDFloat8:      types.TFloat64,
	OIDNumeric:     types.TDecimal,
	OIDVarchar:     types.TVarchar,
	OIDText:        types.TVarchar,
	OIDName:        types.TVarchar,
	OIDBpchar:      types.TVarchar,
	OIDChar:        types.TVarchar,
	OIDBytea:       types.TBytea,
	OIDDate:        types.TDate,
	OIDTime:        types.TTime,
	OIDTimestamp:   types.TTimestamp,
	OIDTimestamptz: types.TTimestamptz,
	OIDInterval:    types.TInterval,
}

// OIDOf returns the Postgres OID of t (varchar for Varchar, unknown for
// Unknown).
func OIDOf(t types.Type) uint32 {
	if t.IsArray() {
		return arrayOIDOf(t)
	}
	if oid, ok := typeOIDs[t.ID]; ok {
		return oid
	}
	return OIDUnknown
}

// TypeOfOID returns the type a value declared with oid is decoded as; 0
// and 705 give Unknown. Other OIDs are not supported (0A000).
func TypeOfOID(oid uint32) (types.Type, error) {
	if t, ok := oidTypes[oid]; ok {
		return t, nil
	}
	if t, ok := arrayTypeOfOID(oid); ok {
		return t, nil
	}
	return types.TUnknown, sqlerr.Errorf(sqlerr.FeatureNotSupported,
		"parameter type with OID %d is not supported", oid)
}

// columnOID is the OID sent for c: its override when valid for its type.
func columnOID(c Column) (uint32, error) {
	if c.OID == 0 {
		return OIDOf(c.Type), nil
	}
	t, ok := oidTypes[c.OID]
	if !ok || (t.ID != c.Type.ID && !(t.IsInteger() && c.Type.IsInteger())) {
		return 0, fmt.Errorf("pgwire: column %q: OID %d cannot carry %s", c.Name, c.OID, c.Type)
	}
	return c.OID, nil
}

// typeSize is pg_type.typlen: the fixed width of a type, -1 for varlena.
func typeSize(oid uint32) int16 {
	switch oid {
	case OIDBool, OIDChar:
		return 1
	case OIDInt2:
		return 2
	case OIDInt4, OIDFloat4, OIDDate, OIDOid:
		return 4
	case OIDInt8, OIDFloat8, OIDTime, OIDTimestamp, OIDTimestamptz:
		return 8
	case OIDInterval:
		return 16
	case OIDName:
		return 64
	case OIDUnknown:
		return -2
	}
	return -1
}

// fieldDescriptions builds RowDescription fields for cols with one format
// code per column.
func fieldDescriptions(cols []Column, formats []int16) ([]pgproto3.FieldDescription, error) {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, c := range cols {
		oid, err := columnOID(c)
		if err != nil {
			return nil, err
		}
		fields[i] = pgproto3.FieldDescription{
			Name:                 []byte(c.Name),
			TableOID:             c.TableOID,
			TableAttributeNumber: c.ColumnAttr,
			DataTypeOID:          oid,
			DataTypeSize:         typeSize(oid),
			TypeModifier:         -1,
			Format:               formats[i],
		}
	}
	return fields, nil
}

// expandFormats applies the protocol's format-code rule: none means all
// text, one applies to all n values, otherwise one per value.
func expandFormats(codes []int16, n int) ([]int16, error) {
	out := make([]int16, n)
	switch len(codes) {
	case 0:
	case 1:
		for i := range out {
			out[i] = codes[0]
		}
	case n:
		copy(out, codes)
	default:
		return nil, sqlerr.Errorf(codeProtocolViolation,
			"bind message has %d format codes but %d values", len(codes), n)
	}
	for _, c := range out {
		if c != 0 && c != 1 {
			return nil, sqlerr.Errorf(codeProtocolViolation, "unsupported format code: %d", c)
		}
	}
	return out, nil
}
