package pgwire

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestNULRefusedEverywhere: no text value can hold NUL, so every way in
// refuses it with 22021, as Postgres does: a raw NUL or a \000 escape in
// COPY text, and a bound parameter in text or binary format. (COPY used
// to store it.)
func TestNULRefusedEverywhere(t *testing.T) {
	for _, line := range []string{"a\x00b\n", "a\\000b\n", "ok\tx\x00\n"} {
		d := NewCopyTextDecoder(strings.NewReader(line))
		if _, _, err := d.ReadRow(); sqlerrCode(err) != "22021" {
			t.Errorf("COPY line %q: %v, want 22021", line, err)
		}
	}
	d := NewCopyTextDecoder(strings.NewReader("a\\001b\tc\n"))
	if f, _, err := d.ReadRow(); err != nil || f[0] != "a\x01b" {
		t.Errorf("other control bytes are text: %q, %v", f, err)
	}

	ts := startServer(t, &fakeHandler{}, Config{})
	c := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := testCtx(t)
	for _, format := range []int16{formatText, formatBinary} {
		rr := c.PgConn().ExecParams(ctx, "echo varchar", [][]byte{[]byte("a\x00b")},
			[]uint32{25}, []int16{format}, nil)
		_, err := rr.Close()
		wantPgError(t, err, "22021")
	}
}
