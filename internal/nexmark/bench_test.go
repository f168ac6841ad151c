package nexmark

import "testing"

// BenchmarkEvent generates consecutive events (the 1:3:46 mix) and
// writes each as a COPY row: the generator's ceiling, per core.
func BenchmarkEvent(b *testing.B) {
	g, err := NewGenerator(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("generate", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			e := g.Event(int64(i))
			_ = e
		}
	})
	b.Run("generate+copy", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := range b.N {
			e := g.Event(int64(i))
			buf = AppendRow(buf[:0], &e, COPY)
		}
	})
}
