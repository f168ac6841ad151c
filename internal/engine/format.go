package engine

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sluice-db/sluice/internal/storage"
)

// FormatVersion is the on-disk format this build reads and writes. Bump it
// whenever keys, encodings or catalog records change incompatibly.
//
// 2: timestamps count microseconds from 2000-01-01, not 1970 (Postgres's
// range, to 294276 AD); format 1's timestamps would read 30 years late.
const FormatVersion = 2

const formatKey = "sluice/format_version"

// checkFormat refuses a data directory written by another format version,
// and stamps a new one with ours.
func checkFormat(ctx context.Context, s *storage.Store, dir string) error {
	v, ok, err := s.Meta(formatKey)
	if err != nil {
		return err
	}
	if !ok {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], FormatVersion)
		return s.PutMeta(ctx, formatKey, buf[:])
	}
	if len(v) != 8 || binary.BigEndian.Uint64(v) != FormatVersion {
		got := "unknown"
		if len(v) == 8 {
			got = fmt.Sprint(binary.BigEndian.Uint64(v))
		}
		return fmt.Errorf("data directory %q was written by an incompatible version of Sluice (format %s; this build reads format %d): use another --data-dir or the matching build", dir, got, FormatVersion)
	}
	return nil
}
