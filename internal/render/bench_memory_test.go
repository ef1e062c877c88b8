package render

import (
	"context"
	"fmt"
	"image/color"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// scriptRanges are code point ranges label text is drawn from: Latin, Greek, Cyrillic, Arabic,
// Hebrew, CJK, Hangul and symbols, many of them beyond what the font holds.
var scriptRanges = [][2]rune{{'A', 'z'}, {0x391, 0x3c9}, {0x410, 0x44f}, {0x621, 0x64a}, {0x5d0, 0x5ea},
	{0x4e00, 0x9fff}, {0xac00, 0xd7a3}, {0x2190, 0x23ff}, {0xc0, 0x24f}}

func randomLabel(rng *rand.Rand) string {
	var b strings.Builder
	for range 6 + rng.IntN(12) {
		r := scriptRanges[rng.IntN(len(scriptRanges))]
		b.WriteRune(r[0] + rune(rng.IntN(int(r[1]-r[0]+1))))
	}
	return b.String()
}

// rssMB is the process's resident set in MiB after a GC that returns what it can to the OS.
func rssMB(b *testing.B) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	mb, ok := testenv.ProcStatusMB(0, "VmRSS")
	if !ok {
		b.Skip("no VmRSS in /proc/self/status")
	}
	return mb
}

// BenchmarkRandomLabelsRSS draws 10,000 map images of 40 points, each labelled with random text
// in many scripts at a random size, on one Renderer (as a worker does), and reports the
// process's RSS after the 1,000th and the 10,000th image: with the font caches bounded
// (FontCacheBytes) it stays flat however many new glyphs and sizes the labels bring.
//
//	go test ./internal/render -run '^$' -bench RandomLabelsRSS -benchtime 1x
func BenchmarkRandomLabelsRSS(b *testing.B) {
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 256, Height: 256, DPI: 96}
	for b.Loop() {
		rng := rand.New(rand.NewPCG(1, 2))
		var rss1k float64
		for i := range 10_000 {
			fs := make([]Feature, 40)
			for j := range fs {
				fs[j] = Feature{Geom: orb.Point{rng.Float64() * 100, rng.Float64() * 100}, Label: randomLabel(rng)}
			}
			m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
				Features: NewIndex(fs),
				Symbol:   Symbol{Fill: color.NRGBA{200, 0, 0, 255}, Marker: MarkerCircle, MarkerSize: 4},
				Label:    &LabelStyle{Size: 4 + rng.Float64()*40, Color: color.NRGBA{A: 255}, Halo: color.NRGBA{255, 255, 255, 255}, HaloWidth: 1, AllowOverlap: true},
			}}}
			img, err := r.Draw(ctx, m, v)
			if err != nil {
				b.Fatal(err)
			}
			r.Release(img)
			if i == 999 {
				rss1k = rssMB(b)
			}
		}
		rss10k := rssMB(b)
		b.ReportMetric(rss1k, "MB-RSS-at-1k")
		b.ReportMetric(rss10k, "MB-RSS-at-10k")
		b.ReportMetric(100*(rss10k-rss1k)/rss1k, "%-growth")
		for _, c := range r.Fonts().Caches() {
			s := c.Stats()
			b.Logf("%s: %d entries, %.1f of %.1f MiB, %d evictions", s.Name, s.Entries, float64(s.Bytes)/(1<<20), float64(s.MaxBytes)/(1<<20), s.Evictions)
		}
		fmt.Fprintf(os.Stderr, "RSS after 1,000 images %.1f MiB, after 10,000 %.1f MiB\n", rss1k, rss10k)
	}
}
