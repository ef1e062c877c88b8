package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/paulmach/orb"
)

// benchDraw draws (and, with encode, PNG-encodes) m for v b.N times, releasing each image as a server
// would after sending it. The features come from memory, loaded once.
func benchDraw(b *testing.B, v View, encode bool) {
	benchMap(b, worldMap(loadCountries(b)), v, encode)
}

// benchFromGPKG is benchDraw with PNG encoding, the countries read from the GeoPackage on every draw.
func benchFromGPKG(b *testing.B, v View) {
	src, err := openGPKGSource(countriesGPKG, "countries", "NAME")
	if err != nil {
		b.Fatal(err)
	}
	defer src.db.Close()
	m := worldMap(nil)
	m.Layers[0].Features = src
	benchMap(b, m, v, true)
}

func benchMap(b *testing.B, m Map, v View, encode bool) {
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var buf bytes.Buffer
	b.ReportAllocs()
	// Warm the caches (glyphs, pools) as a running server would have them.
	if img, err := r.Draw(ctx, m, v); err == nil {
		r.Release(img)
	}
	b.ResetTimer()
	cpu0, n := processCPU(), 0
	for b.Loop() {
		n++
		img, err := r.Draw(ctx, m, v)
		if err != nil {
			b.Fatal(err)
		}
		if encode {
			buf.Reset()
			if err := Encode(&buf, img, PNG, EncodeOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		r.Release(img)
	}
	// CPU time per image is steadier than wall time on a busy machine.
	if cpu := processCPU() - cpu0; cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
	}
	if encode {
		b.ReportMetric(float64(buf.Len()), "png-bytes")
	}
}

// BenchmarkWorld1024PNG is the benchmark: the world countries with labels at 1024×768, drawn
// and encoded as PNG (MapServer's map2img figure includes its PNG encoding).
func BenchmarkWorld1024PNG(b *testing.B) { benchDraw(b, worldView(), true) }

// BenchmarkWorld1024Draw is the same without encoding.
func BenchmarkWorld1024Draw(b *testing.B) { benchDraw(b, worldView(), false) }

// BenchmarkWorld1024PNGFromGPKG is BenchmarkWorld1024PNG reading the features from the GeoPackage
// (R-tree query, blob and WKB decoding) on every draw, as MapServer does.
func BenchmarkWorld1024PNGFromGPKG(b *testing.B) { benchFromGPKG(b, worldView()) }

// BenchmarkTileZ4FromGPKG is BenchmarkTileZ4 reading from the GeoPackage on every draw.
func BenchmarkTileZ4FromGPKG(b *testing.B) { benchFromGPKG(b, tileView(tileZ4)) }

// BenchmarkTileZ4 is a 256×256 PNG tile at zoom 4 (x 8, y 5).
func BenchmarkTileZ4(b *testing.B) { benchDraw(b, tileView(tileZ4), true) }

// BenchmarkTileZ8 is a 256×256 PNG tile at zoom 8 over Paris (x 129, y 88).
func BenchmarkTileZ8(b *testing.B) { benchDraw(b, tileView(tileZ8), true) }

// BenchmarkEncodePNG is the PNG encoding of the world image alone.
func BenchmarkEncodePNG(b *testing.B) {
	fs := loadCountries(b)
	img, err := Draw(context.Background(), worldMap(fs), worldView())
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Encode(&buf, img, PNG, EncodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeFormats encodes the world image in each format.
func BenchmarkEncodeFormats(b *testing.B) {
	fs := loadCountries(b)
	img, err := Draw(context.Background(), worldMap(fs), worldView())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []Format{PNG, PNG32, PNG8, JPG, GIF} {
		b.Run(f.String(), func(b *testing.B) {
			var buf bytes.Buffer
			cpu0, n := processCPU(), 0
			for b.Loop() {
				n++
				buf.Reset()
				if err := Encode(&buf, img, f, EncodeOptions{}); err != nil {
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

// BenchmarkDenseRegion draws a region view of dense parcels (48 m squares 50 m apart, 65 m a pixel,
// 512×384: 133,000 parcels, each smaller than a pixel) three ways: from their geometry (drawn
// from footprints), from their geometry with every polygon filled and stroked, and from
// footprint-only features as a source that reduces them would yield.
func BenchmarkDenseRegion(b *testing.B) {
	sc := parcelScene("region", 512, 384, orb.Bound{Min: orb.Point{10, 10}, Max: orb.Point{10 + 512*65, 10 + 384*65}}, diffLimits{})
	m, v := sc.mapfarm()
	b.Run("geometry", func(b *testing.B) { benchMap(b, m, v, false) })
	b.Run("outlines", func(b *testing.B) {
		img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
		r := defaultRenderer()
		b.ReportAllocs()
		for b.Loop() {
			if err := r.DrawTo(context.Background(), plainSurface{NewGGSurface(img, r.Fonts())}, m, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	fs := m.Layers[0].Features.(Features)
	reduced := make(Features, len(fs))
	for i, f := range fs {
		reduced[i] = Feature{Footprint: footprintOf(b, f.Geom)}
	}
	m.Layers[0].Features = reduced
	b.Run("footprints", func(b *testing.B) { benchMap(b, m, v, false) })
}

// BenchmarkDenseStreet draws the street view of the differential suite: 1,300 parcels 25 px wide
// with 0.5 px outlines at 1024×768.
func BenchmarkDenseStreet(b *testing.B) {
	m, v := diffScenes()[0].mapfarm()
	benchMap(b, m, v, false)
}

// streetDraw is what the banded street benchmarks draw with: the dense street scene, a renderer,
// and one surface and drawing state kept across draws as Renderer.Draw keeps them.
type streetDraw struct {
	r   *Renderer
	m   Map
	v   View
	img *image.RGBA
	s   *GGSurface
	st  *drawState
}

func newStreetDraw(b *testing.B) streetDraw {
	b.Helper()
	m, v := diffScenes()[0].mapfarm()
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	s := NewGGSurface(img, r.Fonts())
	return streetDraw{r: r, m: m, v: v, img: img, s: s, st: &drawState{surface: s}}
}

// BenchmarkDenseStreetBands draws the dense street view as BenchmarkDenseStreet does, drawn
// straight away (bands=1) and replayed in two bands (bands=2), in one run, whatever the cores and
// the draws in progress: the wall time of each and its CPU.
func BenchmarkDenseStreetBands(b *testing.B) {
	d := newStreetDraw(b)
	r, m, v, img, s, st := d.r, d.m, d.v, d.img, d.s, d.st
	for _, bands := range []int{1, 2} {
		b.Run(fmt.Sprintf("bands=%d", bands), func(b *testing.B) {
			b.ReportAllocs()
			cpu0, n := processCPU(), 0
			for b.Loop() {
				n++
				s.reset(img)
				s.record(bands)
				if err := r.drawTo(context.Background(), s, st, m, v); err != nil {
					b.Fatal(err)
				}
				s.flushList()
			}
			if cpu := processCPU() - cpu0; cpu > 0 && n > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
			}
		})
	}
}

// BenchmarkDenseStreetCriticalPath measures, in CPU time, what two bands can take off the street
// draw's wall time on an idle machine, which a busy one cannot show in wall time: the CPU of a
// draw straight away (seq-cpu-ms), and of a banded one's recording (record-cpu-ms) and of each of
// its two bands replayed one after the other (band0/band1-cpu-ms). With a free core the draw takes
// about the recording plus the longer band (critical-%: of the draw straight away).
func BenchmarkDenseStreetCriticalPath(b *testing.B) {
	d := newStreetDraw(b)
	r, m, v, img, s, st := d.r, d.m, d.v, d.img, d.s, d.st
	ctx := context.Background()
	var seq, rec, b0, b1 time.Duration
	n := 0
	for b.Loop() {
		n++
		c0 := processCPU()
		s.reset(img)
		if err := r.drawTo(ctx, s, st, m, v); err != nil {
			b.Fatal(err)
		}
		c1 := processCPU()
		s.reset(img)
		s.record(2)
		if err := r.drawTo(ctx, s, st, m, v); err != nil {
			b.Fatal(err)
		}
		c2 := processCPU()
		e := s.list.edges(0, v.Height, 2)
		replayBand(&s.raster, img, &s.list, e[0], e[1])
		c3 := processCPU()
		replayBand(&s.raster, img, &s.list, e[1], e[2])
		c4 := processCPU()
		s.list.clear()
		seq, rec, b0, b1 = seq+c1-c0, rec+c2-c1, b0+c3-c2, b1+c4-c3
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(ms(seq), "seq-cpu-ms")
	b.ReportMetric(ms(rec), "record-cpu-ms")
	b.ReportMetric(ms(b0), "band0-cpu-ms")
	b.ReportMetric(ms(b1), "band1-cpu-ms")
	b.ReportMetric(100*float64(rec+max(b0, b1))/float64(seq), "critical-%")
}

// BenchmarkEncodeStreetPNG encodes the dense street view (1024×768, opaque) as a PNG serially and
// in pngBands bands (compressed by up to GOMAXPROCS goroutines): wall time, CPU and file size.
func BenchmarkEncodeStreetPNG(b *testing.B) {
	m, v := diffScenes()[0].mapfarm()
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	rgba, err := r.Draw(context.Background(), m, v)
	if err != nil {
		b.Fatal(err)
	}
	for _, bands := range []int{1, pngBands} {
		b.Run(fmt.Sprintf("bands=%d", bands), func(b *testing.B) {
			var pool sync.Pool
			var buf bytes.Buffer
			cpu0, n := processCPU(), 0
			for b.Loop() {
				n++
				buf.Reset()
				if err := encodeRGBAPNGBands(&buf, rgba, !opaque(rgba), 1, &pool, bands, runtime.GOMAXPROCS(0)); err != nil {
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
