// Package storagetest holds fault injectors for tests of the store and of
// what runs on it, used with Pebble's errorfs.
package storagetest

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// FailingFiles fails every operation on a file whose name ends in Suffix
// while On. With ".sst": a disk on which no flush succeeds, so Pebble's
// memtables fill and it stalls writes.
type FailingFiles struct {
	Suffix string
	On     atomic.Bool
}

// MaybeError implements errorfs.Injector.
func (f *FailingFiles) MaybeError(op errorfs.Op) error {
	if f.On.Load() && strings.HasSuffix(op.Path, f.Suffix) {
		return errorfs.ErrInjected
	}
	return nil
}

func (f *FailingFiles) String() string { return "FailingFiles(" + f.Suffix + ")" }
