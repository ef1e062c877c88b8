package vectorfonts_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
)

// decoded is a glyphs message as MapLibre reads it.
type decoded struct {
	name, rng string
	glyphs    map[rune]vectorfonts.Glyph
}

// decode reads a glyphs protocol buffer with one fontstack, failing t on any malformed field.
func decode(t *testing.T, b []byte) decoded {
	t.Helper()
	var d decoded
	d.glyphs = map[rune]vectorfonts.Glyph{}
	stacks := 0
	fields(t, b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num != 1 || typ != protowire.BytesType {
			t.Fatalf("glyphs: unexpected field %d type %d", num, typ)
		}
		stacks++
		fields(t, v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			switch num {
			case 1:
				d.name = string(v)
			case 2:
				d.rng = string(v)
			case 3:
				var g vectorfonts.Glyph
				seen := map[protowire.Number]bool{}
				fields(t, v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
					seen[num] = true
					switch num {
					case 1:
						g.ID = rune(x)
					case 2:
						g.Bitmap = v
					case 3:
						g.Width = int(x)
					case 4:
						g.Height = int(x)
					case 5:
						g.Left = int(protowire.DecodeZigZag(x))
					case 6:
						g.Top = int(protowire.DecodeZigZag(x))
					case 7:
						g.Advance = int(x)
					default:
						t.Fatalf("glyph: unexpected field %d", num)
					}
				})
				for _, req := range []protowire.Number{1, 3, 4, 5, 6, 7} {
					if !seen[req] {
						t.Fatalf("glyph %d: required field %d missing", g.ID, req)
					}
				}
				d.glyphs[g.ID] = g
			default:
				t.Fatalf("fontstack: unexpected field %d", num)
			}
		})
	})
	if stacks != 1 {
		t.Fatalf("%d fontstacks, want 1", stacks)
	}
	return d
}

func fields(t *testing.T, b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64)) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				t.Fatalf("bad varint: %v", protowire.ParseError(n))
			}
			fn(num, typ, nil, x)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				t.Fatalf("bad bytes: %v", protowire.ParseError(n))
			}
			fn(num, typ, v, 0)
			b = b[n:]
		default:
			t.Fatalf("field %d: unexpected wire type %d", num, typ)
		}
	}
}

func newGlyphs(t *testing.T) *vectorfonts.Glyphs {
	fonts, err := render.NewFonts()
	if err != nil {
		t.Fatal(err)
	}
	return vectorfonts.New(fonts, 0)
}

// TestRangeMetricsAndField decodes the Latin range and checks known characters of DejaVu Sans at
// 24 px: their metrics, and that the distance field is above the edge value (192) inside the ink
// and below it outside.
func TestRangeMetricsAndField(t *testing.T) {
	g := newGlyphs(t)
	stack := "DejaVu Sans Book,Arial Unicode MS Regular"
	b, err := g.Range(context.Background(), stack, "0-255")
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, b)
	if d.name != stack || d.rng != "0-255" {
		t.Errorf("fontstack %q %q, want %q 0-255", d.name, d.rng, stack)
	}
	if len(d.glyphs) < 180 {
		t.Errorf("%d glyphs in 0-255, want the printable Latin-1 ones (≥ 180)", len(d.glyphs))
	}
	for _, g := range d.glyphs {
		if len(g.Bitmap) != 0 && len(g.Bitmap) != (g.Width+2*vectorfonts.Buffer)*(g.Height+2*vectorfonts.Buffer) {
			t.Errorf("U+%04X: bitmap of %d bytes for a %d×%d glyph", g.ID, len(g.Bitmap), g.Width, g.Height)
		}
	}
	sp, ok := d.glyphs[' ']
	if !ok || len(sp.Bitmap) != 0 || sp.Width != 0 || sp.Advance != 7 {
		t.Errorf("space: %+v, want no ink and an advance of 7 (651 of 2048 at 24 px, 7.6, rounded down)", sp)
	}
	// DejaVu Sans 'I': units per em 2048, advance 604, stem x 201–403, cap height 1493; ascent
	// 1901 (22.3 px, 23 rounded up as FreeType's size metrics).
	i := d.glyphs['I']
	if i.Advance != 7 || i.Width < 2 || i.Width > 4 || i.Height < 17 || i.Height > 19 || i.Top != 18-23 || i.Left < 1 || i.Left > 3 {
		t.Errorf("I: %+v, want advance 7, a 2–4 px wide, 17–19 px tall ink box, left 1–3, top 18-23 = -5", withoutBitmap(i))
	}
	w := i.Width + 2*vectorfonts.Buffer
	at := func(g vectorfonts.Glyph, x, y int) byte { return g.Bitmap[y*w+x] }
	mid := at(i, w/2, (i.Height+2*vectorfonts.Buffer)/2)
	if mid <= 192 {
		t.Errorf("I: field %d in the middle of the stem, want > 192 (inside)", mid)
	}
	if c := at(i, 0, 0); c >= 192-3*255/vectorfonts.Radius+20 {
		t.Errorf("I: field %d at the corner, 3 px outside, want about %d", c, 192-3*255/vectorfonts.Radius)
	}
	// the field falls from the stem's middle to its side, one step per pixel
	row := (i.Height + 2*vectorfonts.Buffer) / 2
	for x := w / 2; x > 0; x-- {
		if at(i, x-1, row) > at(i, x, row) {
			t.Errorf("I: field rises outwards at x=%d: %d then %d", x, at(i, x, row), at(i, x-1, row))
		}
	}
	// 'O' is empty in its middle: the counter is outside
	o := d.glyphs['O']
	ow := o.Width + 2*vectorfonts.Buffer
	if c := o.Bitmap[(o.Height/2+vectorfonts.Buffer)*ow+ow/2]; c >= 192 {
		t.Errorf("O: field %d in its counter, want < 192 (outside)", c)
	}
	// 'g' descends below the baseline: its ink box is taller than its top above the baseline
	if gg := d.glyphs['g']; gg.Top+23 >= gg.Height {
		t.Errorf("g: top %d, height %d: want a descender", gg.Top, gg.Height)
	}
}

func withoutBitmap(g vectorfonts.Glyph) vectorfonts.Glyph { g.Bitmap = nil; return g }

// TestStacksChooseStyle: a bold stack draws DejaVu Sans Bold (wider), and stacks named as a
// generated style names them answer.
func TestStacksChooseStyle(t *testing.T) {
	g := newGlyphs(t)
	adv := func(stack string) int {
		b, err := g.Range(context.Background(), stack, "0-255")
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, b).glyphs['A'].Advance
	}
	book, bold := adv(vectorfonts.StackName(false, false)), adv(vectorfonts.StackName(true, false))
	if book != 16 || bold <= book {
		t.Errorf("advance of A: book %d, bold %d; want 16 (1401 of 2048 at 24 px) and a wider bold", book, bold)
	}
	if a := adv("Arial Bold, Noto Sans Regular"); a != bold {
		t.Errorf("Arial Bold draws A %d px wide, want DejaVu Sans Bold's %d", a, bold)
	}
}

// TestRangeCoverage: a range of Cyrillic has its letters, one of CJK has none (DejaVu Sans has
// none) but is still a valid message.
func TestRangeCoverage(t *testing.T) {
	g := newGlyphs(t)
	b, err := g.Range(context.Background(), "DejaVu Sans Book", "1024-1279")
	if err != nil {
		t.Fatal(err)
	}
	if d := decode(t, b); len(d.glyphs[0x416].Bitmap) == 0 {
		t.Error("Cyrillic Ж (U+0416) has no field")
	}
	b, err = g.Range(context.Background(), "DejaVu Sans Book", "19968-20223")
	if err != nil {
		t.Fatal(err)
	}
	if d := decode(t, b); len(d.glyphs) != 0 || d.rng != "19968-20223" {
		t.Errorf("CJK range: %d glyphs, range %q; want none, 19968-20223", len(d.glyphs), d.rng)
	}
	again, _ := g.Range(context.Background(), "DejaVu Sans Book", "19968-20223")
	if !bytes.Equal(b, again) {
		t.Error("the same range twice gave different bytes")
	}
}

func TestBadRequests(t *testing.T) {
	g := newGlyphs(t)
	for _, c := range []struct{ stack, rng string }{
		{"DejaVu Sans Book", "1-256"},
		{"DejaVu Sans Book", "0-511"},
		{"DejaVu Sans Book", "65536-65791"},
		{"DejaVu Sans Book", "-256--1"},
		{"DejaVu Sans Book", "0-255.pbf"},
		{"", "0-255"},
		{" ,DejaVu Sans Book", "0-255"},
		{string(bytes.Repeat([]byte("a,"), 200)), "0-255"},
		{"a,b,c,d,e,f,g,h,i", "0-255"},
	} {
		if _, err := g.Range(context.Background(), c.stack, c.rng); !errors.Is(err, vectorfonts.ErrBadRequest) {
			t.Errorf("Range(%.20q, %q): %v, want ErrBadRequest", c.stack, c.rng, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Range(ctx, "DejaVu Sans Book", "256-511"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// BenchmarkRangeUncached draws the Latin range of DejaVu Sans Book, glyphs and distance fields,
// without the cache.
func BenchmarkRangeUncached(b *testing.B) {
	fonts, err := render.NewFonts()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		g := vectorfonts.New(fonts, -1)
		out, err := g.Range(context.Background(), "DejaVu Sans Book", "0-255")
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.ReportMetric(float64(n), "bytes/range")
}

// TestCancelledRequestDoesNotFailOthers: requests for a range being drawn wait for that drawing;
// when the request that draws goes away mid-way, the others still get the range.
func TestCancelledRequestDoesNotFailOthers(t *testing.T) {
	fonts, err := render.NewFonts()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		g := vectorfonts.New(fonts, -1) // no cache: every request draws or waits
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, err := g.Range(ctx, "DejaVu Sans Book", "0-255")
			first <- err
		}()
		time.Sleep(2 * time.Millisecond) // the first is drawing (it takes 15 ms or more)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for j := range errs {
			wg.Go(func() { _, errs[j] = g.Range(context.Background(), "DejaVu Sans Book", "0-255") })
		}
		time.Sleep(2 * time.Millisecond)
		cancel()
		wg.Wait()
		if err := <-first; err == nil {
			t.Logf("round %d: the first request finished before it was cancelled", i)
		}
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: a live request failed beside a cancelled one: %v", i, err)
			}
		}
	}
}
