package sqllogic

import (
	"testing"
)

// textRows builds result rows of unknown type from strings.
func textRows(rows ...[]string) [][]cell {
	out := make([][]cell, len(rows))
	for i, r := range rows {
		for _, v := range r {
			out[i] = append(out[i], cell{text: v})
		}
	}
	return out
}

func TestRenderValue(t *testing.T) {
	if got := renderValue(nil); got != "NULL" {
		t.Errorf("NULL rendered %q", got)
	}
	if got := renderValue([]byte{}); got != "(empty)" {
		t.Errorf("empty string rendered %q", got)
	}
	if got := renderValue([]byte("t")); got != "t" {
		t.Errorf("value rendered %q", got)
	}
}

func TestWhitespaceNormalisation(t *testing.T) {
	// Values are trimmed and internal runs collapse; expected lines may
	// separate columns with tabs or several spaces.
	rows := textRows([]string{" k  y ", "1"}, []string{"a\tb", "2"})
	s := shapeRows(rows, NoSort, false, 0)
	if m := compareRows(s, []string{"k y\t1", "a   b 2"}, NoSort, false); m != Exact {
		t.Errorf("got %v, want Exact", m)
	}
	if m := compareRows(s, []string{"ky 1", "a b 2"}, NoSort, false); m != Mismatch {
		t.Errorf("removed space matched: %v", m)
	}
}

func TestRowSortSortsActualRowsAsStrings(t *testing.T) {
	rows := textRows([]string{"9", "x"}, []string{"10", "y"}, []string{"10", "a"})
	s := shapeRows(rows, RowSort, false, 0)
	// String order: "10" < "9"; rows with equal first value by the second.
	if m := compareRows(s, []string{"10 a", "10 y", "9 x"}, RowSort, false); m != Exact {
		t.Errorf("rowsort: got %v for %q", m, s.lines())
	}
	// The expected lines are not sorted for you.
	if m := compareRows(s, []string{"9 x", "10 a", "10 y"}, RowSort, false); m != Mismatch {
		t.Errorf("unsorted expectation matched: %v", m)
	}
	// nosort keeps server order.
	ns := shapeRows(rows, NoSort, false, 0)
	if m := compareRows(ns, []string{"9 x", "10 y", "10 a"}, NoSort, false); m != Exact {
		t.Errorf("nosort: got %v", m)
	}
}

func TestValueSortAndValueWise(t *testing.T) {
	rows := textRows([]string{"b", "3"}, []string{"a", "1"})
	vs := shapeRows(rows, ValueSort, false, 0)
	if m := compareRows(vs, []string{"1", "3", "a", "b"}, ValueSort, false); m != Exact {
		t.Errorf("valuesort: %q", vs.lines())
	}
	vw := shapeRows(rows, NoSort, true, 0)
	if m := compareRows(vw, []string{"b", "3", "a", "1"}, NoSort, false); m != Exact {
		t.Errorf("valuewise: %q", vw.lines())
	}
}

func TestHashThreshold(t *testing.T) {
	rows := textRows([]string{"c", "3"}, []string{"a", "1"}, []string{"b", "2"})
	// Values are hashed after sorting, each followed by a newline; the
	// digests come from `printf '1\n2\n3\na\nb\nc\n' | md5sum` and
	// `printf 'a\n1\nb\n2\nc\n3\n' | md5sum`.
	s := shapeRows(rows, ValueSort, false, 5)
	want := "6 values hashing to 1aaf6b3a23fa17af5862c0b6108b7d5a"
	if m := compareRows(s, []string{want}, ValueSort, true); m != Exact {
		t.Errorf("got %q, want %q", s.lines(), want)
	}
	rs := shapeRows(rows, RowSort, false, 5)
	want = "6 values hashing to c91ca425381e660b0b2dab1bc5989912"
	if m := compareRows(rs, []string{want}, RowSort, true); m != Exact {
		t.Errorf("got %q, want %q", rs.lines(), want)
	}
	// At or under the threshold nothing is hashed.
	if s := shapeRows(rows, ValueSort, false, 6); s.hashed || len(s.rows) != 6 {
		t.Errorf("hashed at the threshold: %q", s.lines())
	}
	// Threshold 0 never hashes.
	if s := shapeRows(rows, NoSort, false, 0); s.hashed {
		t.Error("hashed with threshold 0")
	}
}

func TestSemanticComparison(t *testing.T) {
	cases := []struct {
		actual   []string
		oids     []uint32
		expected string
		want     Match
	}{
		{[]string{"1.50", "x"}, []uint32{oidNumeric, oidText}, "1.5 x", Semantic},
		{[]string{"100000000000000000000"}, []uint32{oidFloat8}, "1e+20", Semantic},
		{[]string{"0.30000000000000004"}, []uint32{oidFloat8}, "0.3", Mismatch},
		{[]string{"NaN", "Infinity"}, []uint32{oidNumeric, oidNumeric}, "NaN Infinity", Exact},
		// A quotient cut at Postgres's scale against one printed longer.
		{[]string{"263196.666666666667"}, []uint32{oidNumeric}, "263196.66666666666666666666667", Semantic},
		{[]string{"263196.666666666666"}, []uint32{oidNumeric}, "263196.66666666666666666666667", Mismatch},
		{[]string{"2.67"}, []uint32{oidNumeric}, "2.666666666", Mismatch},
		{[]string{"0.6666666666666667"}, []uint32{oidFloat8}, "0.66666666666666666666", Mismatch},
		{[]string{"Infinity"}, []uint32{oidFloat8}, "-Infinity", Mismatch},
		{[]string{"2002-02-02 02:00:00+00"}, []uint32{oidTimestampTZ}, "2002-02-02 02:00:00+00:00", Semantic},
		{[]string{"2002-02-02 04:00:00+02"}, []uint32{oidTimestampTZ}, "2002-02-02 02:00:00+00:00", Semantic},
		{[]string{"2002-02-02 02:00:00+00"}, []uint32{oidTimestampTZ}, "2002-02-02 02:00:01+00:00", Mismatch},
		{[]string{"2002-02-02 02:00:00"}, []uint32{0}, "2002-02-02 02:00:00+00", Mismatch},
		{[]string{"2015-07-15 00:00:01.0010"}, []uint32{oidTimestamp}, "2015-07-15 00:00:01.001", Semantic},
		{[]string{"2015-07-15"}, []uint32{0}, "2015-07-15 00:00:00", Mismatch},
		{[]string{"24:00:00", "7"}, []uint32{oidInterval, oidInt4}, "1 day 7", Semantic},
		{[]string{"1 day 01:00:00"}, []uint32{oidInterval}, "25:00:00", Semantic},
		{[]string{"1 mon"}, []uint32{oidInterval}, "30 days", Mismatch},
		{[]string{"-1 days +02:00:00"}, []uint32{oidInterval}, "-22:00:00", Semantic},
		{[]string{"00:00:01"}, []uint32{oidInterval}, "00:00:02", Mismatch},
		{[]string{"1.0"}, []uint32{oidText}, "1", Mismatch},
		{[]string{"true"}, []uint32{oidBool}, "t", Semantic},
		{[]string{"f"}, []uint32{oidBool}, "t", Mismatch},
		{[]string{"1", "2"}, []uint32{oidInt4, oidInt4}, "1 2 3", Mismatch},
	}
	for _, c := range cases {
		row := make([]cell, len(c.actual))
		for i := range c.actual {
			row[i] = cell{text: c.actual[i], oid: c.oids[i]}
		}
		s := shapeRows([][]cell{row}, NoSort, false, 0)
		if got := compareRows(s, []string{c.expected}, NoSort, true); got != c.want {
			t.Errorf("%q vs %q: got %v, want %v", c.actual, c.expected, got, c.want)
		}
		if c.want == Semantic {
			if got := compareRows(s, []string{c.expected}, NoSort, false); got != Mismatch {
				t.Errorf("%q vs %q matched with semantics off", c.actual, c.expected)
			}
		}
	}
}

func TestSemanticRowSortMatchesAsMultiset(t *testing.T) {
	// Sorted as strings the actual rows are "1 day 01:00:00", "24:00:00";
	// the expected lines, printed the other way, sort as "1 day",
	// "1 day 01:00:00". Pairing by position fails, so sorted results are
	// paired as multisets.
	rows := [][]cell{{{text: "24:00:00", oid: oidInterval}}, {{text: "1 day 01:00:00", oid: oidInterval}}}
	s := shapeRows(rows, RowSort, false, 0)
	if m := compareRows(s, []string{"1 day", "1 day 01:00:00"}, RowSort, true); m != Semantic {
		t.Errorf("got %v", m)
	}
	if m := compareRows(s, []string{"1 day", "1 day 02:00:00"}, RowSort, true); m != Mismatch {
		t.Errorf("different values matched: %v", m)
	}
	// Without a sort mode order is part of the result.
	ns := shapeRows(rows, NoSort, false, 0)
	if m := compareRows(ns, []string{"1 day 01:00:00", "1 day"}, NoSort, true); m != Mismatch {
		t.Errorf("nosort matched out of order: %v", m)
	}
}
