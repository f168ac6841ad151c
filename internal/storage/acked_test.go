package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// writeAcked opens a store in dir and acknowledges n DML batches and a
// catalog change, then closes it, leaving them in the WAL.
func writeAcked(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := s.AppendDML(ctx, 7, []byte(fmt.Sprintf("record %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutMeta(ctx, "catalog/x", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// newestLog returns the path of the store's newest non-empty WAL file.
func newestLog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	for i := len(logs) - 1; i >= 0; i-- {
		if st, err := os.Stat(logs[i]); err == nil && st.Size() > 0 {
			return logs[i]
		}
	}
	t.Fatalf("no WAL in %s", dir)
	return ""
}

// TestDamagedWALRefused: a store whose WAL was truncated, zeroed or
// deleted after acknowledging writes refuses to open, saying so, instead
// of opening without them; AcceptDataLoss opens it, and from then on it
// opens normally.
func TestDamagedWALRefused(t *testing.T) {
	damages := map[string]func(path string) error{
		"truncated": func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()/2)
		},
		"zeroed": func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, make([]byte, st.Size()), 0o644)
		},
		"deleted": os.Remove,
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			writeAcked(t, dir, 200)
			if err := damage(newestLog(t, dir)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(ctx, Options{Dir: dir})
			if !errors.Is(err, ErrAcknowledgedWritesLost) || !strings.Contains(err.Error(), "--accept-data-loss") {
				t.Fatalf("open after the WAL was %s: %v", name, err)
			}
			s, err := Open(ctx, Options{Dir: dir, AcceptDataLoss: true})
			if err != nil {
				t.Fatalf("open accepting the loss: %v", err)
			}
			if _, err := s.AppendDML(ctx, 7, []byte("after")); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(ctx, Options{Dir: dir})
			if err != nil {
				t.Fatalf("reopen after accepting the loss: %v", err)
			}
			_ = s.Close()
		})
	}
}

// TestUndamagedStoreOpens: reopening after a clean close, a lost or torn
// ACKNOWLEDGED file, or a crash that drops unsynced data is never taken
// for a damaged WAL.
func TestUndamagedStoreOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeAcked(t, dir, 50)
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	for _, content := range [][]byte{nil, []byte("torn"), make([]byte, 12)} {
		path := filepath.Join(dir, ackedFileName)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, Options{Dir: dir})
		if err != nil {
			t.Fatalf("ACKNOWLEDGED file %q: %v", content, err)
		}
		_ = s.Close()
	}

	for _, pct := range []int{0, 50, 100} {
		fs := vfs.NewCrashableMem()
		s, err := Open(ctx, Options{FS: fs, Dir: "db"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if _, err := s.AppendDML(ctx, 3, []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(uint64(pct), 2))})
		_ = s.Close()
		s2, err := Open(ctx, Options{FS: crashed, Dir: "db"})
		if err != nil {
			t.Fatalf("after a crash keeping %d%% of unsynced data: %v", pct, err)
		}
		if last, err := s2.LastDML(3); err != nil || last != 100 {
			t.Errorf("after a crash: last DML %d, %v; want 100", last, err)
		}
		_ = s2.Close()
	}
}

// TestCorruptFileIsAnError: a corrupt sstable is an error for the read
// that meets it (IsCorruption), not a panic: Pebble's default reaction,
// through our logger's Fatalf, ended the process with a goroutine dump.
func TestCorruptFileIsAnError(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := s.AppendDML(ctx, 7, []byte(fmt.Sprintf("record %04d %s", i, strings.Repeat("x", 100)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no sstable was written")
	}
	f, err := os.OpenFile(ssts[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\xde\xad\xbe\xef\xde\xad\xbe\xef"), 3000); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	s, err = Open(ctx, Options{Dir: dir})
	if err == nil {
		defer s.Close()
		_, err = s.ReadDML(7, 1, 5000)
	}
	if !IsCorruption(err) {
		t.Fatalf("reading the corrupt file: %v, want a corruption error", err)
	}
}
