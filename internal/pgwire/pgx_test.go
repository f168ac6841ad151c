package pgwire

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func TestErrorsKeepConnectionUsable(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	bothModes(t, func(t *testing.T, mode pgx.QueryExecMode) {
		conn := ts.connect(t, mode)
		ctx := testCtx(t)
		_, err := conn.Exec(ctx, "bad")
		pe := wantPgError(t, err, "42601")
		if pe.Severity != "ERROR" || pe.Detail != "the detail" || pe.Hint != "the hint" || pe.Position != 1 ||
			!strings.Contains(pe.Message, "syntax error") {
			t.Errorf("error fields: %+v", pe)
		}
		_, err = conn.Exec(ctx, "internal")
		if pe := wantPgError(t, err, "XX000"); !strings.Contains(pe.Message, "something broke") {
			t.Errorf("internal error message %q", pe.Message)
		}
		var n int32
		if err := conn.QueryRow(ctx, "select 7").Scan(&n); err != nil || n != 7 {
			t.Fatalf("after errors: %v, %d", err, n)
		}
	})
}

func TestSimpleProtocolMultipleStatements(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)
	results, err := conn.PgConn().Exec(ctx, "select 1; rows 3; begin").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if got := strings.Join(tags, ","); got != "SELECT 1,SELECT 3,BEGIN" {
		t.Fatalf("tags %q", got)
	}
	if len(results[1].Rows) != 3 || string(results[1].Rows[2][0]) != "3" {
		t.Fatalf("rows %q", results[1].Rows)
	}
	if st := conn.PgConn().TxStatus(); st != 'T' {
		t.Fatalf("tx status %c after begin", st)
	}
	// An error stops the rest of the string; the status is reported again.
	_, err = conn.PgConn().Exec(ctx, "commit; bad; begin").ReadAll()
	wantPgError(t, err, "42601")
	if st := conn.PgConn().TxStatus(); st != 'I' {
		t.Fatalf("tx status %c: the statement after the error ran", st)
	}
	for _, q := range []string{"", " ; ;"} {
		results, err = conn.PgConn().Exec(ctx, q).ReadAll()
		if err != nil || len(results) != 1 || len(results[0].Rows) != 0 {
			t.Fatalf("empty query %q: %v %+v", q, err, results)
		}
	}
}

func TestCancelRequest(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{})}
	ts := startServer(t, h, Config{})
	bothModes(t, func(t *testing.T, mode pgx.QueryExecMode) {
		conn := ts.connect(t, mode)
		ctx := testCtx(t)
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Exec(ctx, "sleep")
			errc <- err
		}()
		<-h.sleeping
		if err := conn.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
		pe := wantPgError(t, <-errc, "57014")
		if pe.Message != msgCanceledByUser {
			t.Errorf("message %q", pe.Message)
		}
		var n int32
		if err := conn.QueryRow(ctx, "select 3").Scan(&n); err != nil || n != 3 {
			t.Fatalf("after cancel: %v", err)
		}
	})
}

// TestCancelNeedsSecret: a cancel request with the right pid and a wrong
// key does nothing; with the right key (sent by hand, as libpq does) it
// cancels.
func TestCancelNeedsSecret(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{})}
	ts := startServer(t, h, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "sleep")
		errc <- err
	}()
	<-h.sleeping
	pid, key := conn.PgConn().PID(), conn.PgConn().SecretKey()
	wrong := append([]byte(nil), key...)
	wrong[0] ^= 0xff
	sendCancel(t, ts.addr, pid, wrong)
	select {
	case err := <-errc:
		t.Fatalf("cancelled with a wrong secret: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	sendCancel(t, ts.addr, pid, key)
	wantPgError(t, <-errc, "57014")
}

func sendCancel(t *testing.T, addr string, pid uint32, key []byte) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	buf, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: key}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection without answering.
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := nc.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("cancel connection: read %d, %v", n, err)
	}
}

func TestSCRAM(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{Users: map[string]string{"root": "s3cret", "bob": "pw"}})
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, ts.url("root", "s3cret"))
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	var n int32
	if err := conn.QueryRow(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatal(err)
	}
	conn.Close(ctx)
	for _, c := range []struct{ user, pw string }{{"root", "wrong"}, {"bob", "s3cret"}, {"nobody", "pw"}} {
		_, err := pgx.Connect(ctx, ts.url(c.user, c.pw))
		if pe := wantPgError(t, err, "28P01"); pe.Severity != "FATAL" {
			t.Errorf("%s: severity %s", c.user, pe.Severity)
		}
	}
	if _, err := pgx.Connect(ctx, ts.url("root", "")); err == nil {
		t.Fatal("connected without a password")
	}
}

func TestStartupParameters(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	cfg, err := pgx.ParseConfig(ts.url("root", "") + "&application_name=myapp")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	pc := conn.PgConn()
	want := map[string]string{
		"server_version": DefaultServerVersion, "server_encoding": "UTF8", "client_encoding": "UTF8",
		"DateStyle": "ISO, MDY", "TimeZone": "UTC", "integer_datetimes": "on",
		"standard_conforming_strings": "on", "IntervalStyle": "postgres", "is_superuser": "on",
		"session_authorization": "root", "application_name": "myapp",
	}
	for k, v := range want {
		if got := pc.ParameterStatus(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, err := conn.Exec(ctx, "set application_name other", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if got := pc.ParameterStatus("application_name"); got != "other" {
		t.Errorf("after SET: application_name %q", got)
	}
	if _, err := pgx.Connect(ctx, strings.Replace(ts.url("root", ""), "/dev?", "/nodb?", 1)); err == nil {
		t.Fatal("connected to a database the handler refused")
	} else {
		wantPgError(t, err, "3D000")
	}
}

func TestNotice(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	cfg, _ := pgx.ParseConfig(ts.url("root", ""))
	notices := make(chan *pgconn.Notice, 1)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices <- n }
	ctx := testCtx(t)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, "notice")
	if err != nil || tag.String() != "DO" {
		t.Fatalf("%v %q", err, tag)
	}
	n := <-notices
	if n.Severity != "NOTICE" || n.Code != "01000" || n.Message != "hello from notice" || n.Detail != "d" {
		t.Fatalf("notice %+v", n)
	}
}

func TestCopyFromStdin(t *testing.T) {
	h := &fakeHandler{}
	ts := startServer(t, h, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := testCtx(t)
	data := "a\tb\n\\N\tx\\ty\\\\z\nlast\t\\x41\\101"
	tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(data), "copy")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("copy: %v %q", err, tag)
	}
	want := [][]string{{"a", "b"}, {"NULL", "x\ty\\z"}, {"last", "AA"}}
	if got := h.copied; !equalRows(got, want) {
		t.Fatalf("copied %q, want %q", got, want)
	}
	// The client aborts: CopyFail reaches the session as 57014.
	_, err = conn.PgConn().CopyFrom(ctx, io.MultiReader(strings.NewReader("c\td\n"), errReader{}), "copy")
	wantPgError(t, err, "57014")
	// The session rejects a row while the client is still sending.
	big := strings.Repeat("x\ty\n", 50000)
	_, err = conn.PgConn().CopyFrom(ctx, strings.NewReader("fail\t1\n"+big), "copy")
	wantPgError(t, err, "22P02")
	if len(h.copied) != 3 {
		t.Fatalf("failed copies kept rows: %d", len(h.copied))
	}
	rows, err := conn.Query(ctx, "copied")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if rows.Err() != nil || n != 3 {
		t.Fatalf("after copies: %v, %d rows", rows.Err(), n)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("client gave up") }

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

// TestShutdown: cancelling Serve's ctx ends running statements with 57P01
// and closes idle connections; Serve returns nil (checked at cleanup) and
// goleak checks that nothing is left running.
func TestShutdown(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{})}
	ts := startServer(t, h, Config{})
	busy := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	idle := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "sleep")
		errc <- err
	}()
	<-h.sleeping
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	wantPgError(t, <-errc, "57P01")
	if _, err := idle.Exec(ctx, "select 1"); err == nil {
		t.Fatal("idle connection still served after shutdown")
	}
	if _, err := pgx.Connect(ctx, ts.url("root", "")); err == nil {
		t.Fatal("new connection accepted after shutdown")
	}
}
