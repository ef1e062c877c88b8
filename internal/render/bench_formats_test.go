package render

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkFormats draws and encodes the benchmark maps in every output format through
// DrawEncoded, as a worker does: the 1024×768 world with labels, and the 256×256 tiles at zoom 4
// and 8. Raster formats are Draw plus Encode; SVG and PDF draw the same calls on a vector surface.
// Reported: wall ns/op, CPU ms per image and the document size.
func BenchmarkFormats(b *testing.B) {
	m := worldMap(loadCountries(b))
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		v    View
	}{{"world1024", worldView()}, {"tileZ4", tileView(tileZ4)}, {"tileZ8", tileView(tileZ8)}} {
		for _, f := range []Format{PNG, PNG32, PNG8, JPG, GIF, BMP, TIFF, SVG, PDF} {
			b.Run(c.name+"/"+f.String(), func(b *testing.B) {
				var buf bytes.Buffer
				if err := r.DrawEncoded(ctx, &buf, m, c.v, f, EncodeOptions{}); err != nil { // warm the caches
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0, n := processCPU(), 0
				for b.Loop() {
					n++
					buf.Reset()
					if err := r.DrawEncoded(ctx, &buf, m, c.v, f, EncodeOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				if cpu := processCPU() - cpu0; cpu > 0 && n > 0 {
					b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
				}
				b.ReportMetric(float64(buf.Len()), "bytes")
			})
		}
	}
}
