package pgwire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

// TestCopyTextLinesAnyReads: the decoder takes whole buffered lines at a
// time, so a line may start in one read of the client's data and end in a
// later one, or be longer than its buffer. Whatever the reads, it returns
// the rows a line-by-line split of the whole input gives.
func TestCopyTextLinesAnyReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := []byte("ab\t\\N.\r\n\n\n")
		in := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 400).Draw(t, "in")
		bufSize := rapid.IntRange(16, 64).Draw(t, "buffer")
		var r io.Reader = strings.NewReader(string(in))
		switch rapid.IntRange(0, 2).Draw(t, "reads") {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		d := NewCopyTextDecoder(r)
		d.r = bufio.NewReaderSize(r, bufSize)
		got := readAllRows(d)
		if want := splitLinesReference(string(in)); got != want {
			t.Fatalf("input %q:\n got %s\nwant %s", in, got, want)
		}
	})
}

// readAllRows prints every row d returns, and its end.
func readAllRows(d *CopyTextDecoder) string {
	var sb strings.Builder
	for {
		fields, nulls, err := d.ReadRow()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(&sb, "error at line %d: %v", d.Line(), err)
			}
			return sb.String()
		}
		fmt.Fprintf(&sb, "%q %v; ", fields, nulls)
	}
}

// splitLinesReference splits in into lines first, then each line as the
// decoder does.
func splitLinesReference(in string) string {
	var sb strings.Builder
	d := NewCopyTextDecoder(strings.NewReader(""))
	lines := strings.SplitAfter(in, "\n")
	for _, line := range lines {
		if line == "" {
			break
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == `\.` {
			break
		}
		d.line++
		fields, nulls, err := d.splitLine(line)
		if err != nil {
			fmt.Fprintf(&sb, "error at line %d: %v", d.line, err)
			break
		}
		fmt.Fprintf(&sb, "%q %v; ", fields, nulls)
	}
	return sb.String()
}

// TestCopyTextReadErrorEndsRows: an error of the client's data stream
// between two buffers of lines is the decoder's error, not the data's end.
func TestCopyTextReadErrorEndsRows(t *testing.T) {
	d := NewCopyTextDecoder(iotest.TimeoutReader(strings.NewReader("a\nb\n")))
	var err error
	for err == nil {
		_, _, err = d.ReadRow()
	}
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("ReadRow ended with %v, want the reader's error", err)
	}
}
