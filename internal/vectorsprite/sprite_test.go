package vectorsprite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/vectorsprite"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

func symbologyMap(t *testing.T) *servicedef.Map {
	t.Helper()
	cfg, err := servicedef.Load(filepath.Join("..", "vectorstyle", "testdata", "symbology.yaml"), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Services[0].Maps[0]
}

type sheet struct {
	img   image.Image
	index map[string]vectorsprite.Entry
}

// decodeSheet reads a sheet as a client does: the PNG decoded, the JSON parsed.
func decodeSheet(t *testing.T, s *vectorsprite.Sheet) sheet {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(s.PNG))
	if err != nil {
		t.Fatal(err)
	}
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var index map[string]vectorsprite.Entry
	if err := json.Unmarshal(js, &index); err != nil {
		t.Fatal(err)
	}
	return sheet{img, index}
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

func near(a, b color.NRGBA) bool {
	d := func(x, y uint8) bool { return x-y < 8 || y-x < 8 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// TestSheet draws the sheets of the test symbology's markers at 1× and 2× and checks, in the
// decoded PNG, that each icon the index names holds its marker: its colour in the middle, the
// outline's near the edge of the square marker, nothing in the corners of the diamond and the
// circle, and nothing outside the icons.
func TestSheet(t *testing.T) {
	m := symbologyMap(t)
	icons := vectorstyle.Icons(m)
	if len(icons) != 3 {
		t.Fatalf("%d icons, want 3 (two classes and the default)", len(icons))
	}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	var one map[string]vectorsprite.Entry
	for _, k := range []int{1, 2} {
		s, err := vectorsprite.Draw(context.Background(), r, icons, k)
		if err != nil {
			t.Fatal(err)
		}
		sh := decodeSheet(t, s)
		if len(sh.index) != len(icons) {
			t.Fatalf("@%dx: %d entries, want %d", k, len(sh.index), len(icons))
		}
		covered := image.NewAlpha(sh.img.Bounds())
		for _, ic := range icons {
			e, ok := sh.index[ic.Name]
			if !ok {
				t.Fatalf("@%dx: no entry %s", k, ic.Name)
			}
			box := image.Rect(e.X, e.Y, e.X+e.Width, e.Y+e.Height)
			if e.PixelRatio != k || !box.In(sh.img.Bounds()) {
				t.Errorf("@%dx: %s: %+v outside the %v sheet or of another ratio", k, ic.Name, e, sh.img.Bounds())
				continue
			}
			for y := box.Min.Y; y < box.Max.Y; y++ {
				for x := box.Min.X; x < box.Max.X; x++ {
					if covered.AlphaAt(x, y).A != 0 {
						t.Fatalf("@%dx: %s overlaps another icon at %d,%d", k, ic.Name, x, y)
					}
					covered.SetAlpha(x, y, color.Alpha{255})
				}
			}
			if k == 1 {
				continue
			}
			if w := one[ic.Name].Width; e.Width != 2*w || e.Height != 2*one[ic.Name].Height {
				t.Errorf("@2x: %s is %d×%d, want twice @1x's %d", ic.Name, e.Width, e.Height, w)
			}
		}
		for _, ic := range icons {
			e := sh.index[ic.Name]
			cx, cy := e.X+e.Width/2, e.Y+e.Height/2
			if got, want := nrgba(sh.img.At(cx, cy)), ic.Symbol.Color.NRGBA(); !near(got, want) {
				t.Errorf("@%dx: %s: middle pixel %v, want the marker's colour %v", k, ic.Name, got, want)
			}
			if ic.Symbol.MarkerStyle != symbology.MarkerSquare {
				if a := nrgba(sh.img.At(e.X+1, e.Y+1)).A; a != 0 {
					t.Errorf("@%dx: %s (%s): corner alpha %d, want 0", k, ic.Name, ic.Symbol.MarkerStyle, a)
				}
			} else {
				// walking left from the middle, the fill gives way to the white outline, then to
				// the transparent margin
				white, x := false, cx
				for ; x > e.X && nrgba(sh.img.At(x, cy)).A != 0; x-- {
					white = white || near(nrgba(sh.img.At(x, cy)), color.NRGBA{255, 255, 255, 255})
				}
				if !white || x == e.X && nrgba(sh.img.At(x, cy)).A != 0 {
					t.Errorf("@%dx: %s: no white outline between the fill and a transparent margin", k, ic.Name)
				}
			}
		}
		b := sh.img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if covered.AlphaAt(x, y).A == 0 && nrgba(sh.img.At(x, y)).A != 0 {
					t.Fatalf("@%dx: pixel %d,%d outside every icon is not transparent", k, x, y)
				}
			}
		}
		one = sh.index
	}
}

// TestStyleNamesAreInTheSheet: every icon-image a style's match can give is in the sheet.
func TestStyleNamesAreInTheSheet(t *testing.T) {
	m := symbologyMap(t)
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	s, err := vectorsprite.Draw(context.Background(), r, vectorstyle.Icons(m), 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := vectorstyle.New(&servicedef.Service{Name: "symbology"}, m, vectorstyle.Options{ServiceURL: "https://h/arcgis/rest/services/symbology/VectorTileServer"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range st.Layers {
		img, ok := l.Layout["icon-image"]
		if !ok {
			continue
		}
		expr := img.([]any) // ["match", key, label, name, …, default]
		for i := 3; i < len(expr); i += 2 {
			n++
			if _, ok := s.Index[expr[i].(string)]; !ok {
				t.Errorf("%s: icon %q is not in the sprite", l.ID, expr[i])
			}
		}
		if _, ok := s.Index[expr[len(expr)-1].(string)]; !ok {
			t.Errorf("%s: default icon %q is not in the sprite", l.ID, expr[len(expr)-1])
		}
	}
	if n == 0 {
		t.Error("the style names no icons")
	}
}

func TestLimits(t *testing.T) {
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	big := vectorstyle.Icon{Name: "big", Symbol: &symbology.Symbol{Type: symbology.SimpleMarker, MarkerStyle: symbology.MarkerSquare, Size: 500}}
	if _, err := vectorsprite.Draw(context.Background(), r, []vectorstyle.Icon{big}, 1); err == nil {
		t.Error("a 500 pt marker: no error")
	}
	if _, err := vectorsprite.Draw(context.Background(), r, nil, 3); err == nil {
		t.Error("pixel ratio 3: no error")
	}
	s, err := vectorsprite.Draw(context.Background(), r, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := s.JSON(); string(js) != "{}" {
		t.Errorf("empty sheet index %s, want {}", js)
	}
	if _, err := png.Decode(bytes.NewReader(s.PNG)); err != nil {
		t.Errorf("empty sheet: %v", err)
	}
}
