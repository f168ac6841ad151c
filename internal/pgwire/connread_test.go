package pgwire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"pgregory.net/rapid"
)

// chunkedSource hands out its data in the given chunk sizes (as a socket
// does), then err.
type chunkedSource struct {
	data   []byte
	chunks []int
	err    error
	reads  int
}

func (s *chunkedSource) Read(p []byte) (int, error) {
	s.reads++
	if len(s.data) == 0 {
		return 0, s.err
	}
	n := len(s.data)
	if len(s.chunks) > 0 {
		n, s.chunks = min(n, s.chunks[0]), s.chunks[1:]
	}
	n = copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}

// TestConnReaderStream checks that whatever the read sizes and however
// bulk mode is switched between reads, the reader yields the source's
// bytes in order, then its error, and holds no buffer once bulk mode is off
// and the buffer is drained.
func TestConnReaderStream(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		data := rapid.SliceOfN(rapid.Byte(), 0, 3*bulkReadSize).Draw(t, "data")
		chunks := rapid.SliceOf(rapid.IntRange(1, 2*bulkReadSize)).Draw(t, "chunks")
		errEnd := errors.New("connection reset")
		src := &chunkedSource{data: data, chunks: chunks, err: errEnd}
		cr := &connReader{r: src}
		var got []byte
		for {
			cr.setBulk(rapid.Bool().Draw(t, "bulk"))
			p := make([]byte, rapid.IntRange(1, 3*bulkReadSize).Draw(t, "size"))
			n, err := cr.Read(p)
			got = append(got, p[:n]...)
			if err != nil {
				if err != errEnd {
					t.Fatalf("error %v, want %v", err, errEnd)
				}
				break
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes differing from the %d written", len(got), len(data))
		}
		cr.setBulk(false)
		if cr.buf != nil {
			t.Fatal("a drained reader out of bulk mode still holds its buffer")
		}
	})
}

// TestConnReaderBulkReadsFewer checks the point of bulk mode: small reads
// of a fast stream reach the socket once per 64 KiB, not once per read.
func TestConnReaderBulkReadsFewer(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 16*bulkReadSize)
	for _, bulk := range []bool{false, true} {
		src := &chunkedSource{data: data, err: io.EOF}
		cr := &connReader{r: src}
		cr.setBulk(bulk)
		got, err := io.ReadAll(io.LimitReader(onlyReader{cr}, int64(len(data))))
		if err != nil || len(got) != len(data) {
			t.Fatalf("bulk=%v: read %d bytes, err %v", bulk, len(got), err)
		}
		perRead := len(data) / src.reads
		if bulk && perRead < bulkReadSize/2 || !bulk && perRead > 4096 {
			t.Fatalf("bulk=%v: %d socket reads for %d bytes", bulk, src.reads, len(data))
		}
	}
}

// onlyReader hides everything but Read (io.ReadAll asks 512 bytes first,
// then grows: small reads, as the protocol decoder makes).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 4096)]) }
