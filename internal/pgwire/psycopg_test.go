package pgwire

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/testenv"
)

// psycopgScript connects with psycopg2 in its default mode (a transaction
// opened implicitly with BEGIN, client-side parameter interpolation, text
// results), runs a few statements and prints what it saw.
const psycopgScript = `
import sys, psycopg2
conn = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="root", dbname="dev", connect_timeout=5)
cur = conn.cursor()
cur.execute("select %s", (41,))
print("select", cur.fetchone()[0])
print("status", conn.info.transaction_status)
cur.execute("types")
row = cur.fetchone()
print("types", row[0], row[1], row[6], bytes(row[10]), row[11], row[13])
try:
    cur.execute("bad")
except psycopg2.Error as e:
    print("error", e.pgcode, e.diag.message_detail)
conn.rollback()
cur.execute("rows 3")
print("rows", [r[0] for r in cur.fetchall()])
conn.commit()
conn.close()
`

func TestPsycopg2(t *testing.T) {
	python := testenv.Python(t)
	ts := startServer(t, &fakeHandler{}, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", psycopgScript, strconv.Itoa(ts.port))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), stderr.String())
	}
	want := strings.Join([]string{
		"select 41",
		"status 2", // psycopg2 sent BEGIN; the fake reports the block as T
		"types True -32768 12345.6789 b'\\x00\\xff\\x10' 2024-02-29 2024-02-29 13:45:06.500000",
		"error 42601 the detail",
		"rows [1, 2, 3]",
	}, "\n") + "\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
