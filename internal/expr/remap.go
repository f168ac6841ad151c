package expr

// RemapInputs returns a copy of d reading input column to(i) wherever it
// read column i; ok is false when to refuses a column d reads (the copy
// is then not to be used). d itself is never modified.
func RemapInputs(d Desc, to func(i int) (int, bool)) (Desc, bool) {
	if d.Kind == KindInput {
		j, ok := to(d.Index)
		d.Index = j
		return d, ok
	}
	if len(d.Args) == 0 {
		return d, true
	}
	args := make([]Desc, len(d.Args))
	for i, a := range d.Args {
		m, ok := RemapInputs(a, to)
		if !ok {
			return d, false
		}
		args[i] = m
	}
	d.Args = args
	return d, true
}
