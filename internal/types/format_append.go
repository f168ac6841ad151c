package types

// ParseAppend appends the value s spells in t's text input format (as
// ParseDatum reads it) to col, a column of type t. Integers, text and
// timestamps go straight into their vectors; other types are parsed to a
// Datum first. On error col is unchanged. A bulk load (COPY) parses every
// field through here: boxing each value only for the column to unbox it
// again cost an allocation per field.
func ParseAppend(col Column, s string) error {
	switch v := col.(type) {
	case *Vec[int64]:
		if v.Typ.IsInteger() {
			n, err := parseInt64(s, v.Typ)
			if err != nil {
				return err
			}
			v.Vals = append(v.Vals, n)
			return nil
		}
	case *Vec[string]:
		if v.Typ.ID == Varchar {
			v.Vals = append(v.Vals, s)
			return nil
		}
	case *Vec[DTimestamp]:
		us, err := parseTimestampMicros(s, "timestamp", false)
		if err != nil {
			return err
		}
		v.Vals = append(v.Vals, DTimestamp(us))
		return nil
	case *Vec[DTimestamptz]:
		us, err := parseTimestampMicros(s, "timestamp with time zone", true)
		if err != nil {
			return err
		}
		v.Vals = append(v.Vals, DTimestamptz(us))
		return nil
	}
	d, err := ParseDatum(s, col.Type())
	if err != nil {
		return err
	}
	col.Append(d)
	return nil
}
