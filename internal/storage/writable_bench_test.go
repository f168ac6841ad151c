package storage

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkWriteSST writes a 100 000-row sstable of 130-byte values to
// disk, as a bulk seal does (writeSST): b.N files.
func BenchmarkWriteSST(b *testing.B) {
	s, err := Open(context.Background(), Options{FS: vfs.Default, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.makeDir(s.ingestDir, &s.ingestDirMade); err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 130)
	key := make([]byte, 16)
	b.SetBytes(100_000 * int64(len(key)+len(val)))
	for i := 0; b.Loop(); i++ {
		name := filepath.Join(s.ingestDir, "b.sst")
		f, err := s.writeSST(name, &s.writerOpts, func(add func(k, v []byte) error) error {
			for r := range uint64(100_000) {
				binary.BigEndian.PutUint64(key[8:], r)
				binary.BigEndian.PutUint64(val, r*7919)
				if err := add(key, val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		_ = vfs.Default.Remove(f.path)
	}
}
