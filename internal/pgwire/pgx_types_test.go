package pgwire

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/sluice-db/sluice/internal/types"
)

// scanTarget returns a pgtype value to scan a column of t into.
func scanTarget(t types.Type) any {
	switch t.ID {
	case types.Bool:
		return &pgtype.Bool{}
	case types.Int16:
		return &pgtype.Int2{}
	case types.Int32:
		return &pgtype.Int4{}
	case types.Int64:
		return &pgtype.Int8{}
	case types.Float32:
		return &pgtype.Float4{}
	case types.Float64:
		return &pgtype.Float8{}
	case types.Decimal:
		return &pgtype.Numeric{}
	case types.Varchar:
		return &pgtype.Text{}
	case types.Bytea:
		return &[]byte{}
	case types.Date:
		return &pgtype.Date{}
	case types.Time:
		return &pgtype.Time{}
	case types.Timestamp:
		return &pgtype.Timestamp{}
	case types.Timestamptz:
		return &pgtype.Timestamptz{}
	case types.Interval:
		return &pgtype.Interval{}
	}
	panic("no scan target for " + t.String())
}

// datumOf converts what pgx decoded back into a Datum, independently of
// pgwire's own encoders.
func datumOf(v any, t types.Type) (types.Datum, error) {
	switch x := v.(type) {
	case *pgtype.Bool:
		return validOr(x.Valid, x.Bool), nil
	case *pgtype.Int2:
		return validOr(x.Valid, int64(x.Int16)), nil
	case *pgtype.Int4:
		return validOr(x.Valid, int64(x.Int32)), nil
	case *pgtype.Int8:
		return validOr(x.Valid, x.Int64), nil
	case *pgtype.Float4:
		return validOr(x.Valid, float64(x.Float32)), nil
	case *pgtype.Float8:
		return validOr(x.Valid, x.Float64), nil
	case *pgtype.Numeric:
		return numericDatum(x)
	case *pgtype.Text:
		return validOr(x.Valid, x.String), nil
	case *[]byte:
		if *x == nil {
			return nil, nil
		}
		return *x, nil
	case *pgtype.Date:
		return dateDatum(x), nil
	case *pgtype.Time:
		return validOr(x.Valid, types.DTime(x.Microseconds)), nil
	case *pgtype.Timestamp:
		return timestampDatum(x.Valid, x.InfinityModifier, types.TimestampFromTime(x.Time), false), nil
	case *pgtype.Timestamptz:
		return timestampDatum(x.Valid, x.InfinityModifier, types.DTimestamp(types.TimestamptzFromTime(x.Time)), true), nil
	case *pgtype.Interval:
		return validOr(x.Valid, types.DInterval{Months: x.Months, Days: x.Days, Micros: x.Microseconds}), nil
	}
	return nil, fmt.Errorf("unexpected scan value %T for %s", v, t)
}

func validOr(valid bool, d types.Datum) types.Datum {
	if !valid {
		return nil
	}
	return d
}

func numericDatum(x *pgtype.Numeric) (types.Datum, error) {
	if !x.Valid {
		return nil, nil
	}
	switch {
	case x.NaN:
		return types.ParseDatum("NaN", types.TDecimal)
	case x.InfinityModifier == pgtype.Infinity:
		return types.ParseDatum("Infinity", types.TDecimal)
	case x.InfinityModifier == pgtype.NegativeInfinity:
		return types.ParseDatum("-Infinity", types.TDecimal)
	}
	return types.ParseDatum(fmt.Sprintf("%sE%d", x.Int.String(), x.Exp), types.TDecimal)
}

func dateDatum(x *pgtype.Date) types.Datum {
	switch {
	case !x.Valid:
		return nil
	case x.InfinityModifier == pgtype.Infinity:
		return types.DateInfinity
	case x.InfinityModifier == pgtype.NegativeInfinity:
		return types.DateNegInfinity
	}
	return types.DateFromTime(x.Time)
}

func timestampDatum(valid bool, inf pgtype.InfinityModifier, v types.DTimestamp, tz bool) types.Datum {
	if !valid {
		return nil
	}
	switch inf {
	case pgtype.Infinity:
		v = types.TimestampInfinity
	case pgtype.NegativeInfinity:
		v = types.TimestampNegInfinity
	}
	if tz {
		return types.DTimestamptz(v)
	}
	return v
}

// pgxArg converts a Datum to a value pgx encodes with its own codecs.
func pgxArg(d types.Datum, t types.Type) any {
	if d == nil {
		return nil
	}
	switch x := d.(type) {
	case int64:
		switch t.ID {
		case types.Int16:
			return int16(x)
		case types.Int32:
			return int32(x)
		}
		return x
	case float64:
		if t.ID == types.Float32 {
			return float32(x)
		}
		return x
	case types.DDate:
		return pgtype.Date{Time: x.Time(), Valid: true, InfinityModifier: infinity(x.IsFinite(), x == types.DateInfinity)}
	case types.DTime:
		return pgtype.Time{Microseconds: int64(x), Valid: true}
	case types.DTimestamp:
		return pgtype.Timestamp{Time: x.Time(), Valid: true, InfinityModifier: infinity(x.IsFinite(), x == types.TimestampInfinity)}
	case types.DTimestamptz:
		return pgtype.Timestamptz{Time: x.Time(), Valid: true, InfinityModifier: infinity(x.IsFinite(), x == types.TimestamptzInfinity)}
	case types.DInterval:
		return pgtype.Interval{Months: x.Months, Days: x.Days, Microseconds: x.Micros, Valid: true}
	}
	if t.ID == types.Decimal {
		var n pgtype.Numeric
		if err := n.Scan(types.FormatDatum(d, t)); err != nil {
			panic(err)
		}
		return n
	}
	return d // bool, string, []byte
}

func infinity(finite, positive bool) pgtype.InfinityModifier {
	switch {
	case finite:
		return pgtype.Finite
	case positive:
		return pgtype.Infinity
	}
	return pgtype.NegativeInfinity
}

// TestTypesRoundTrip: every type's values reach pgx intact, in binary
// (extended protocol) and in text (simple protocol).
func TestTypesRoundTrip(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	want := typesRows()
	bothModes(t, func(t *testing.T, mode pgx.QueryExecMode) {
		conn := ts.connect(t, mode)
		rows, err := conn.Query(testCtx(t), "types")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for i := 0; rows.Next(); i++ {
			checkFormats(t, rows.FieldDescriptions(), mode)
			targets := make([]any, len(typesTable))
			for c, col := range typesTable {
				targets[c] = scanTarget(col.typ)
			}
			if err := rows.Scan(targets...); err != nil {
				t.Fatal(err)
			}
			for c, col := range typesTable {
				got, err := datumOf(targets[c], col.typ)
				if err != nil {
					t.Fatal(err)
				}
				if !sameDatum(got, want[i][c], col.typ) {
					t.Errorf("row %d column %s: got %v, want %v", i, col.name, fmtDatum(got, col.typ), fmtDatum(want[i][c], col.typ))
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// checkFormats: pgx asks for binary in the extended protocol, and the
// simple protocol is always text; a test that passes both ways must have
// exercised both encoders.
func checkFormats(t *testing.T, fds []pgconn.FieldDescription, mode pgx.QueryExecMode) {
	t.Helper()
	want := int16(1)
	if mode == pgx.QueryExecModeSimpleProtocol {
		want = 0
	}
	for _, fd := range fds {
		if fd.DataTypeOID == OIDVarchar || fd.DataTypeOID == OIDText {
			continue // pgx reads text types as text either way
		}
		if fd.Format != want {
			t.Fatalf("column %s: format %d, want %d", fd.Name, fd.Format, want)
		}
	}
}

func fmtDatum(d types.Datum, t types.Type) string {
	if d == nil {
		return "NULL"
	}
	return fmt.Sprintf("%T(%s)", d, types.FormatDatum(d, t))
}

// TestTextResultsMatchFormat: the simple protocol's text is exactly
// types.FormatDatum's.
func TestTextResultsMatchFormat(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	res := conn.PgConn().Exec(testCtx(t), "types")
	results, err := res.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := typesRows()
	if len(results) != 1 || len(results[0].Rows) != len(want) {
		t.Fatalf("got %d results", len(results))
	}
	for i, row := range results[0].Rows {
		for c, col := range typesTable {
			var w []byte
			if want[i][c] != nil {
				w = []byte(types.FormatDatum(want[i][c], col.typ))
			}
			if (row[c] == nil) != (w == nil) || string(row[c]) != string(w) {
				t.Errorf("row %d column %s: got %q, want %q", i, col.name, row[c], w)
			}
		}
	}
	for c, fd := range results[0].FieldDescriptions {
		wantOID := OIDOf(typesTable[c].typ)
		if typesTable[c].oid != 0 {
			wantOID = typesTable[c].oid
		}
		if fd.DataTypeOID != wantOID {
			t.Errorf("column %s: OID %d, want %d", fd.Name, fd.DataTypeOID, wantOID)
		}
	}
}

// TestBinaryParams: pgx encodes every type in binary with its own codecs;
// the session receives the same Datums, and echoes them back.
func TestBinaryParams(t *testing.T) {
	h := &fakeHandler{}
	ts := startServer(t, h, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	sql := echoSQL()
	for _, row := range typesRows() {
		args := make([]any, len(typesTable))
		targets := make([]any, len(typesTable))
		for c, col := range typesTable {
			args[c] = pgxArg(row[c], col.typ)
			targets[c] = scanTarget(col.typ)
		}
		if err := conn.QueryRow(testCtx(t), sql, args...).Scan(targets...); err != nil {
			t.Fatal(err)
		}
		got := h.params[len(h.params)-1]
		for c, col := range typesTable {
			if !sameDatum(got[c], row[c], col.typ) {
				t.Errorf("param %s: session got %s, want %s", col.name, fmtDatum(got[c], col.typ), fmtDatum(row[c], col.typ))
			}
			back, err := datumOf(targets[c], col.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !sameDatum(back, row[c], col.typ) {
				t.Errorf("echo %s: got %s, want %s", col.name, fmtDatum(back, col.typ), fmtDatum(row[c], col.typ))
			}
		}
	}
}

func echoSQL() string {
	sql := "echo "
	for c, col := range typesTable {
		if c > 0 {
			sql += ","
		}
		sql += col.typ.String()
	}
	return sql
}

// TestTextParams binds every type in text format, declared by OID, and
// asks for text results.
func TestTextParams(t *testing.T) {
	h := &fakeHandler{}
	ts := startServer(t, h, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	for _, row := range typesRows() {
		values := make([][]byte, len(typesTable))
		oids := make([]uint32, len(typesTable))
		for c, col := range typesTable {
			oids[c] = OIDOf(col.typ)
			if row[c] != nil {
				values[c] = []byte(types.FormatDatum(row[c], col.typ))
			}
		}
		res := conn.PgConn().ExecParams(testCtx(t), echoSQL(), values, oids, []int16{0}, []int16{0}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		got := h.params[len(h.params)-1]
		for c, col := range typesTable {
			if !sameDatum(got[c], row[c], col.typ) {
				t.Errorf("param %s: session got %s, want %s", col.name, fmtDatum(got[c], col.typ), fmtDatum(row[c], col.typ))
			}
			if string(res.Rows[0][c]) != string(values[c]) || (res.Rows[0][c] == nil) != (values[c] == nil) {
				t.Errorf("echo %s: got %q, want %q", col.name, res.Rows[0][c], values[c])
			}
		}
	}
}
