package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Arrays in values: the element count as a uvarint, a null bitmap of the
// elements (bit set = NULL, as for a row), then each non-NULL element's
// value encoding.

func appendValueArray(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	a, ok := d.(types.DArray)
	if !ok || !t.Valid() {
		return dst, wrongDatum(d, t)
	}
	dst = binary.AppendUvarint(dst, uint64(len(a)))
	start := len(dst)
	for range (len(a) + 7) / 8 {
		dst = append(dst, 0)
	}
	elem := t.ElemType()
	var err error
	for i, e := range a {
		if e == nil {
			dst[start+i/8] |= 1 << (i % 8)
			continue
		}
		if dst, err = appendValueDatum(dst, e, elem); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func (r *valueReader) array(t types.Type) (types.Datum, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("codec: no value encoding for %s", t)
	}
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	nb := (n + 7) / 8
	// Every element costs a bitmap bit, so a count beyond that is corrupt
	// (and must not size an allocation).
	if n > uint64(len(r.b))*8 || nb > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: array of %d elements in %d bytes", ErrCorrupt, n, len(r.b))
	}
	nulls := r.b[:nb]
	r.b = r.b[nb:]
	if extra := n % 8; extra != 0 && nulls[nb-1]>>extra != 0 {
		return nil, fmt.Errorf("%w: null bit past the last array element", ErrCorrupt)
	}
	elem := t.ElemType()
	out := make(types.DArray, n)
	for i := range out {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		if out[i], err = r.datum(elem); err != nil {
			return nil, err
		}
	}
	return out, nil
}
