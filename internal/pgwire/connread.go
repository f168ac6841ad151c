package pgwire

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/task"
)

// bulkReadSize is the read size while a client streams COPY data.
const bulkReadSize = 64 << 10

// bulkBufs recycles the bulk read buffers of connections that finished a
// COPY, so an idle connection holds none.
var bulkBufs = sync.Pool{New: func() any { b := make([]byte, bulkReadSize); return &b }}

// connReader is what the protocol decoder reads the socket through.
// Outside a COPY its reads go straight to the socket: a small message costs
// one read and no copy. During a COPY it reads 64 KiB at a time into a
// buffer of its own. The decoder's 8 KiB buffer, against psql's 8 KiB
// CopyData messages, otherwise turned a million-row COPY into about 33 000
// socket reads of 4 KiB each (a tenth of the load's CPU).
type connReader struct {
	r    io.Reader
	buf  *[]byte // nil unless bulk or holding unread bytes
	rp   int     // unread bytes are (*buf)[rp:wp]
	wp   int
	bulk bool

	// The watcher (connwatch.go): nc is the socket (nil: no watching),
	// watching the running watcher, connCtx the connection's context,
	// readErr what the watcher's last read failed with, returned once
	// the bytes before it are read.
	nc       net.Conn
	watching *task.Group
	connCtx  context.Context
	readErr  error
	// watchMu orders watch's timer against unwatch.
	watchMu   sync.Mutex
	timer     *time.Timer
	unwatched bool
}

// setBulk switches bulk reads on or off. Bytes already buffered are still
// read first, so switching never loses or reorders input.
func (cr *connReader) setBulk(on bool) {
	cr.bulk = on
	cr.maybeRelease()
}

func (cr *connReader) Read(p []byte) (int, error) {
	if cr.rp == cr.wp && cr.readErr != nil {
		return 0, cr.readErr
	}
	if cr.rp == cr.wp {
		if !cr.bulk {
			return cr.r.Read(p)
		}
		if cr.buf == nil {
			cr.buf = bulkBufs.Get().(*[]byte)
		}
		n, err := cr.r.Read(*cr.buf)
		cr.rp, cr.wp = 0, n
		if n == 0 {
			return 0, err
		}
		// An error with data is returned by the next Read, which finds
		// the buffer empty and reads the socket again.
	}
	n := copy(p, (*cr.buf)[cr.rp:cr.wp])
	cr.rp += n
	cr.maybeRelease()
	return n, nil
}

// maybeRelease returns the buffer to the pool once it is drained and bulk
// reads are off.
func (cr *connReader) maybeRelease() {
	if cr.bulk || cr.buf == nil || cr.rp != cr.wp {
		return
	}
	bulkBufs.Put(cr.buf)
	cr.buf, cr.rp, cr.wp = nil, 0, 0
}
