package storage

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble knows a store by one file: marker.manifest.*, which names the
// current manifest. Without it Pebble takes the directory for a new store
// and deletes the sstables and logs it finds there as leftovers, so a lost
// or removed marker silently emptied a store. Open therefore decides
// itself whether a directory is new: only an absent or empty directory is;
// one holding the marker must be opened as it stands (Pebble's
// ErrorIfNotExists); anything else is refused, naming what is missing,
// without touching a file.

// ErrNotAStore says the directory holds files but no store Sluice can
// open; nothing in it was changed.
var ErrNotAStore = errors.New("storage: not a Sluice store")

// manifestMarkerPrefix starts the name of Pebble's manifest marker.
const manifestMarkerPrefix = "marker.manifest."

// classifyDir reports whether dir holds a store (its manifest marker is
// there), or else that it may be made into a new one (absent or empty).
func classifyDir(fs vfs.FS, dir string) (exists bool, err error) {
	names, err := fs.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storage: list %q: %w", dir, err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "lost+found" })
	for _, n := range names {
		if strings.HasPrefix(n, manifestMarkerPrefix) {
			return true, nil
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	return false, notAStore(dir, names)
}

// notAStore explains a refusal to open a non-empty directory without a
// manifest marker.
func notAStore(dir string, names []string) error {
	slices.Sort(names)
	shown := names
	if len(shown) > 5 {
		shown = shown[:5]
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	if slices.ContainsFunc(names, isStoreFile) {
		return fmt.Errorf("%w: %q holds a store's files (%s) but no %s* file, which names its current manifest; "+
			"opening it as new would delete them, so nothing was changed: restore the marker file "+
			"(for example from the backup the directory came from)", ErrNotAStore, dir, list, manifestMarkerPrefix)
	}
	return fmt.Errorf("%w: %q is not empty (%s) and holds no store; point the data directory at an empty or new directory",
		ErrNotAStore, dir, list)
}

// isStoreFile reports whether name is one of the files a store keeps.
func isStoreFile(name string) bool {
	for _, p := range []string{"MANIFEST-", "OPTIONS-", "marker."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range []string{".sst", ".log", ".blob"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return name == ingestDirName || name == segmentDirName
}
