package session

import (
	"slices"
	"strings"
	"testing"
)

// TestDeepStatementKeepsServerUp: a statement too deep to parse safely
// (30 000 terms of 1+1+…, which overflowed the C parser's stack and killed
// the server) gets 54001, and the connection and server go on serving.
func TestDeepStatementKeepsServerUp(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	deep := "SELECT " + strings.Repeat("1+", 29999) + "1"
	pe := wantCode(t, c, deep, "54001")
	if pe.Position != 1 {
		t.Errorf("position %d, want 1", pe.Position)
	}
	wantCode(t, c, "SELECT "+strings.Repeat("(", 20000)+"1"+strings.Repeat(")", 20000), "54001")
	if got := queryStrings(t, c, "SELECT 1 + 1"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after the deep statement: %q", got)
	}
	// A long but shallow chain still runs: 2 000 UNION ALL operands.
	union := strings.Repeat("SELECT 1 UNION ALL ", 1999) + "SELECT 1"
	if got := queryStrings(t, connect(t, p), "SELECT count(*) FROM ("+union+") u"); !slices.Equal(got, []string{"2000"}) {
		t.Fatalf("union of 2000: %q", got)
	}
}
