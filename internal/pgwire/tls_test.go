package pgwire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// selfSigned returns a TLS config with a fresh self-signed certificate
// for 127.0.0.1.
func selfSigned(t testing.TB) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// TestTLS: with a certificate the server answers SSLRequest with a TLS
// handshake, so sslmode=require connects (with SCRAM on top), and the
// connection serves queries and a cancelled statement over TLS; without
// one, sslmode=require is refused and sslmode=prefer goes on in plain text.
func TestTLS(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{}), woke: make(chan error, 1)}
	ts := startServer(t, h, Config{TLS: selfSigned(t), Users: map[string]string{"root": "pw"}})
	ctx := testCtx(t)
	c, err := pgx.Connect(ctx, strings.Replace(ts.url("root", "pw"), "sslmode=disable", "sslmode=require", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, not TLS", c.PgConn().Conn())
	}
	var n int64
	if err := c.QueryRow(ctx, "rows 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("query over TLS: %d, %v", n, err)
	}
	go func() { <-h.sleeping; _ = c.PgConn().CancelRequest(context.Background()) }()
	_, err = c.Exec(ctx, "sleep")
	wantPgError(t, err, "57014")

	plain := startServer(t, &fakeHandler{}, Config{})
	if _, err := pgx.Connect(ctx, strings.Replace(plain.url("root", ""), "sslmode=disable", "sslmode=require", 1)); err == nil {
		t.Error("sslmode=require connected to a server without a certificate")
	}
	p, err := pgx.Connect(ctx, strings.Replace(plain.url("root", ""), "sslmode=disable", "sslmode=prefer", 1))
	if err != nil {
		t.Fatalf("sslmode=prefer: %v", err)
	}
	p.Close(ctx)
}

// TestPsqlTLS: psql (libpq) connects with sslmode=require and says so.
func TestPsqlTLS(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{TLS: selfSigned(t), Users: map[string]string{"root": "pw"}})
	out, stderr, err := psql(t, ts, "pw", "", "-d", "dbname=dev sslmode=require", "-c", `\conninfo`, "-c", "rows 2")
	if err != nil || !strings.Contains(out, "SSL connection") {
		t.Fatalf("psql over TLS: %q %q %v", out, stderr, err)
	}
}
