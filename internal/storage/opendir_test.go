package storage

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestOpenRefusesStoreWithoutMarker: a store whose manifest marker is
// gone is refused, its files untouched, and opens again with the marker
// back (Pebble used to open it as new and delete the rest).
func TestOpenRefusesStoreWithoutMarker(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	s, err := Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, map[string][]byte{"kept": []byte("yes")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	marker := findMarker(t, fs, "db")
	if err := vfs.Copy(fs, fs.PathJoin("db", marker), "saved-marker"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove(fs.PathJoin("db", marker)); err != nil {
		t.Fatal(err)
	}
	before, _ := fs.List("db")
	_, err = Open(ctx, Options{FS: fs, Dir: "db"})
	if !errors.Is(err, ErrNotAStore) || !strings.Contains(err.Error(), "marker.manifest.") {
		t.Fatalf("open without the marker: %v, want ErrNotAStore naming the marker", err)
	}
	after, _ := fs.List("db")
	slices.Sort(before)
	slices.Sort(after)
	if !slices.Equal(before, after) {
		t.Fatalf("the refused open changed the directory: %v, then %v", before, after)
	}
	if err := vfs.Copy(fs, "saved-marker", fs.PathJoin("db", marker)); err != nil {
		t.Fatal(err)
	}
	s = openMem(t, fs)
	if v, ok, err := s.Meta("kept"); err != nil || !ok || string(v) != "yes" {
		t.Fatalf("after restoring the marker: %q %v %v", v, ok, err)
	}
}

// TestOpenDirectories: which directories become a new store.
func TestOpenDirectories(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		files []string
		ok    bool
	}{
		{"absent", nil, true},
		{"empty", []string{}, true},
		{"only lost+found", []string{"lost+found"}, true},
		{"someone's files", []string{"notes.txt"}, false},
		{"a log without a manifest", []string{"000002.log"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			if tc.files != nil {
				if err := fs.MkdirAll("db", 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.files {
				fh, err := fs.Create(fs.PathJoin("db", f), vfs.WriteCategoryUnspecified)
				if err != nil {
					t.Fatal(err)
				}
				_ = fh.Close()
			}
			s, err := Open(ctx, Options{FS: fs, Dir: "db"})
			if tc.ok {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				_ = s.Close()
				return
			}
			if !errors.Is(err, ErrNotAStore) {
				t.Fatalf("open: %v, want ErrNotAStore", err)
			}
		})
	}
}

func findMarker(t *testing.T, fs vfs.FS, dir string) string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, manifestMarkerPrefix) {
			return n
		}
	}
	t.Fatalf("no manifest marker in %v", names)
	return ""
}
