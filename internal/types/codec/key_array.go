package codec

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Arrays in keys: each element is a value marker and the element's key
// encoding, or a NULL marker that sorts after every value (Postgres orders
// a NULL element last), and a terminator byte below both ends the array.
// So arrays order element by element and then a proper prefix first,
// which is Postgres's array_cmp; element encodings are self-delimiting, so
// no length is needed.
const (
	arrayEnd       = 0x00
	arrayValue     = 0x01
	arrayNullValue = 0x02
)

func appendKeyArray(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	a, ok := d.(types.DArray)
	if !ok || !t.Valid() {
		return dst, wrongDatum(d, t)
	}
	elem := t.ElemType()
	var err error
	for _, e := range a {
		if e == nil {
			dst = append(dst, arrayNullValue)
			continue
		}
		dst = append(dst, arrayValue)
		if dst, err = appendKeyDatum(dst, e, elem); err != nil {
			return dst, err
		}
	}
	return append(dst, arrayEnd), nil
}

func (r *keyReader) array(t types.Type) (types.Datum, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("codec: no key encoding for %s", t)
	}
	elem := t.ElemType()
	out := types.DArray{}
	for {
		m, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch m {
		case arrayEnd:
			return out, nil
		case arrayNullValue:
			out = append(out, nil)
		case arrayValue:
			d, err := decodeKeyDatum(r, elem)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		default:
			return nil, fmt.Errorf("%w: bad array element marker %#x", ErrCorrupt, m)
		}
	}
}
