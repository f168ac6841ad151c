package session

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestCopyFromStdin(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int, b varchar, c numeric)")
	ctx := context.Background()
	text := "1\thello\t1.5\n2\t\\N\t2\n3\ttab\\there\t\\N\n"
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text), "COPY t FROM STDIN")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("text copy: %v %v", tag, err)
	}
	csv := "a,b\n4,\"x, \"\"quoted\"\"\"\n5,\n6,\"\"\n7,\"two\nlines\"\n"
	tag, err = c.PgConn().CopyFrom(ctx, strings.NewReader(csv), "COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("csv copy: %v %v", tag, err)
	}
	got := queryStrings(t, c, "SELECT a, b IS NULL, length(b), c FROM t ORDER BY a")
	want := []string{"1 f 5 1.5", "2 t NULL 2", "3 f 8 NULL", "4 f 11 NULL", "5 t NULL NULL", "6 f 0 NULL", "7 f 9 NULL"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// A bad row fails with the input syntax SQLSTATE and the line.
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("8\tx\t1\nnope\ty\t2\n"), "COPY t FROM STDIN")
	if err == nil || !strings.Contains(err.Error(), "22P02") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad copy: %v", err)
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("count after failed copy: %q", got)
	}
}
