package storage

import (
	"bufio"
	"errors"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// sstWriteBuffer is how much of an sstable the store buffers before a
// write to its file. Pebble's own file writable buffers 4 KiB, one data
// block: a million-row seal made 16 800 write calls for 68 MB, a quarter
// of the seal's CPU in the kernel.
const sstWriteBuffer = 1 << 20

// bufferedWritable is an objstorage.Writable over a file with a large
// write buffer; Finish flushes, syncs and closes it.
type bufferedWritable struct {
	f      vfs.File
	bw     *bufio.Writer
	noSync bool // a file no crash needs (a tail run)
}

var _ objstorage.Writable = (*bufferedWritable)(nil)

func newBufferedWritable(f vfs.File) *bufferedWritable {
	return &bufferedWritable{f: f, bw: bufio.NewWriterSize(f, sstWriteBuffer)}
}

// Write buffers p (the writer may reuse p afterwards).
func (w *bufferedWritable) Write(p []byte) error {
	_, err := w.bw.Write(p)
	return err
}

// Finish makes the file durable and closes it.
func (w *bufferedWritable) Finish() error {
	err := w.bw.Flush()
	if err == nil && !w.noSync {
		err = w.f.Sync()
	}
	return errors.Join(err, w.f.Close())
}

// Abort closes the file; the caller removes it.
func (w *bufferedWritable) Abort() { _ = w.f.Close() }
