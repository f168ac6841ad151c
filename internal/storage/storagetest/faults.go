// Package storagetest holds fault injectors for tests of the store and of
// what runs on it, used with Pebble's errorfs.
package storagetest

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// FailingTables fails every operation on an sstable while On: a disk on
// which no flush succeeds, so Pebble's memtables fill and it stalls
// writes.
type FailingTables struct{ On atomic.Bool }

// MaybeError implements errorfs.Injector.
func (f *FailingTables) MaybeError(op errorfs.Op) error {
	if f.On.Load() && strings.HasSuffix(op.Path, ".sst") {
		return errorfs.ErrInjected
	}
	return nil
}

func (f *FailingTables) String() string { return "FailingTables" }
