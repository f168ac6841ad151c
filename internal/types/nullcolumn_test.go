package types

import "testing"

// NullColumn fills whole bitmap words at once; a row appended after the
// NULLs must still read back as itself, so no bit past n may be set.
func TestNullColumn(t *testing.T) {
	for _, typ := range []Type{{ID: Int64}, {ID: Varchar}, {ID: Timestamp}, {ID: Bool}} {
		for _, n := range []int{0, 1, 63, 64, 65, 130} {
			c := NullColumn(typ, n)
			if c.Len() != n {
				t.Fatalf("%s n=%d: len %d", typ, n, c.Len())
			}
			for i := range n {
				if !c.IsNull(i) || c.Get(i) != nil {
					t.Fatalf("%s n=%d: row %d not NULL", typ, n, i)
				}
			}
			one := MustColumn(typ, 1)
			one.Append(zeroDatum(typ))
			c.AppendFrom(one, 0)
			if c.IsNull(n) || c.Len() != n+1 {
				t.Fatalf("%s n=%d: appended row reads NULL", typ, n)
			}
		}
	}
}

func zeroDatum(t Type) Datum {
	switch t.ID {
	case Int64:
		return int64(7)
	case Varchar:
		return "x"
	case Timestamp:
		return DTimestamp(7)
	}
	return true
}
