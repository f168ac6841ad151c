package types

import "testing"

func TestChunkTextRoundTrip(t *testing.T) {
	ts := []Type{TInt64, TVarchar, TBool}
	in := "+ 1 a t\nU- 5 'x y' f\nU+ 5 '' NULL\n- NULL 'NULL' t D\n"
	c, err := ParseChunk(ts, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.StringAll(); got != in {
		t.Fatalf("round trip:\n got %q\nwant %q", got, in)
	}
	if c.Cardinality() != 3 || c.Capacity() != 4 {
		t.Fatalf("cardinality %d capacity %d", c.Cardinality(), c.Capacity())
	}
	if got, want := c.Compact().String(), "+ 1 a t\nU- 5 'x y' f\nU+ 5 '' NULL\n"; got != want {
		t.Fatalf("compact: %q want %q", got, want)
	}
}

func TestParseChunkErrors(t *testing.T) {
	ts := []Type{TInt64}
	for _, bad := range []string{"* 1", "+ 1 2", "+ x", "+ 'open"} {
		if _, err := ParseChunk(ts, bad); err == nil {
			t.Errorf("ParseChunk(%q) succeeded", bad)
		}
	}
	if _, err := ParseChunk([]Type{{ID: 200}}, "+ 1"); err == nil {
		t.Error("unknown type accepted")
	}
}

func TestCompareInterval(t *testing.T) {
	day := DInterval{Days: 1}
	hours := DInterval{Micros: 24 * MicrosPerHour}
	if CompareInterval(day, hours) != 0 {
		t.Fatal("1 day != 24 hours")
	}
	if CompareInterval(DInterval{Months: 1}, DInterval{Days: 31}) >= 0 {
		t.Fatal("1 month should be < 31 days")
	}
	if CompareInterval(DInterval{Days: -1}, DInterval{Micros: 1}) >= 0 {
		t.Fatal("-1 day should be < 1us")
	}
}
