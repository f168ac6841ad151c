// Package pgtest starts throwaway PostgreSQL clusters for tests: the
// sqllogictest runner's own tests, and any test that uses Postgres as a
// correctness oracle.
//
// Start runs initdb into a fresh temporary directory, starts the server
// with pg_ctl on a free localhost port (socket in the same directory,
// fsync off, TimeZone UTC), and returns a Server whose Stop shuts it down
// immediately and deletes the directory. When the process runs as root the
// binaries run as the "postgres" user, because initdb refuses root.
// StartPostgres wraps this for tests and fails them loudly, never skips,
// when the binaries are missing.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// InstallHint is the command that provides the binaries on Debian.
const InstallHint = "apt-get update && apt-get install -y postgresql"

// Server is a running private cluster.
type Server struct {
	dir   string
	bin   string
	port  int
	creds *syscall.Credential
}

// DSN returns a URL for database db as the superuser "postgres".
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// StartPostgres starts a cluster for the test, stops it at cleanup, and
// returns the DSN of its "postgres" database.
func StartPostgres(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s.DSN("postgres")
}

// Start initialises and starts a new cluster.
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	creds, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s := &Server{dir: dir, bin: bin, creds: creds}
	if err := s.chown(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.initdb(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	// A freed port can be taken again before the server binds it, so try
	// a few.
	for attempt := 0; ; attempt++ {
		if err = s.start(ctx); err == nil || attempt == 2 {
			break
		}
	}
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// findBinDir finds the newest /usr/lib/postgresql/*/bin, or initdb on PATH.
func findBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL server binaries (initdb, pg_ctl) not found; install them with: %s", InstallHint)
}

func versionOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// runAs returns the credentials of the postgres user when we are root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a \"postgres\" user (%s creates it): %w", InstallHint, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) chown() error {
	if s.creds == nil {
		return nil
	}
	if err := os.Chown(s.dir, int(s.creds.Uid), int(s.creds.Gid)); err != nil {
		return fmt.Errorf("chown %s: %w", s.dir, err)
	}
	return nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if s.creds != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.creds}
	}
	return cmd
}

func (s *Server) run(ctx context.Context, name string, args ...string) error {
	out, err := s.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}

func (s *Server) initdb(ctx context.Context) error {
	return s.run(ctx, "initdb", "-D", s.dataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
}

func (s *Server) start(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.port = port
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "+
		"-c synchronous_commit=off -c full_page_writes=off -c TimeZone=UTC", port, s.dir)
	return s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-l", filepath.Join(s.dir, "server.log"),
		"-w", "-t", "60", "-o", opts, "start")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected listener address %v", l.Addr())
	}
	return addr.Port, nil
}

// Stop shuts the server down without a checkpoint and removes its files.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); err == nil {
		_ = s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(s.dir)
}
