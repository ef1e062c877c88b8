package gpkg_test

import (
	"context"
	"image"
	"image/color"
	"math"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/render"
)

// TestResolutionPicture draws a small dense scene — 120 × 120 parcels, 48 m squares on a 50 m
// grid, as bench/dense.sh draws a million — from a GeoPackage with and without a draw's
// Query.Resolution, at street and region scale, and requires the pictures to agree: the
// snapping a provider does for a draw (a thousandth of a pixel or finer) must not show. It also
// requires that the geometries were snapped, so that it tests the pushdown, not its absence.
func TestResolutionPicture(t *testing.T) {
	const side, cell, size = 120, 50.0, 48.0
	// Off the metre grid, so that a snapped vertex differs from a stored one.
	ox, oy := -10915000.3712, 3480000.6134
	path := filepath.Join(t.TempDir(), "dense.gpkg")
	w, err := gpkg.Create(path, "parcels", 3857, "POLYGON", []feature.Field{{Name: "gid", Type: feature.FieldOID}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range side * side {
		x0 := ox + float64(i%side)*cell + (cell-size)/2
		y0 := oy + float64(i/side)*cell + (cell-size)/2
		ring := orb.Ring{{x0, y0}, {x0 + size, y0}, {x0 + size, y0 + size}, {x0, y0 + size}, {x0, y0}}
		if err := w.Add([]any{int64(i + 1)}, orb.Polygon{ring}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gpkg.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := f.Source(context.Background(), "parcels")
	if err != nil {
		t.Fatal(err)
	}
	full := side * cell
	for _, v := range []struct {
		name string
		view render.View
	}{
		// 2 m pixels over about 90 parcels; 62.5 m pixels over all of them (each smaller than a pixel).
		{"street", render.View{Extent: orb.Bound{Min: orb.Point{ox + 1000, oy + 1000}, Max: orb.Point{ox + 1512, oy + 1384}}, Width: 256, Height: 192}},
		{"region", render.View{Extent: orb.Bound{Min: orb.Point{ox - full/6, oy}, Max: orb.Point{ox + full*7/6, oy + full}}, Width: 128, Height: 96}},
	} {
		t.Run(v.name, func(t *testing.T) {
			res := (v.view.Extent.Max[0] - v.view.Extent.Min[0]) / float64(v.view.Width)
			grid, _, _ := feature.GridFor(res)
			offGrid, n := 0, 0
			draw := func(res float64) *image.RGBA {
				layer := render.Layer{
					Symbol: render.Symbol{Fill: color.NRGBA{200, 200, 150, 255}, Stroke: color.NRGBA{80, 80, 80, 255}, StrokeWidth: 0.375},
					Features: render.SourceFunc(func(ctx context.Context, b orb.Bound, yield func(render.Feature) bool) error {
						q := &feature.Query{Bound: &b, Columns: []int{}, Resolution: res}
						return src.Scan(ctx, q, func(ft *feature.Feature) error {
							if res > 0 {
								n++
								for _, p := range ft.Geom.(orb.Polygon)[0] {
									if x := p[0] / grid; math.Abs(x-math.Round(x)) > 1e-6 {
										offGrid++
									}
								}
							}
							if !yield(render.Feature{Geom: ft.Geom}) {
								return context.Canceled
							}
							return nil
						})
					}),
				}
				img, err := render.Draw(context.Background(), render.Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []render.Layer{layer}}, v.view)
				if err != nil {
					t.Fatal(err)
				}
				return img
			}
			exact, snapped := draw(0), draw(res)
			if n == 0 || offGrid > 0 {
				t.Fatalf("%d vertices of the %d features drawn with a resolution are off the %g m grid: not snapped", offGrid, n, grid)
			}
			mean, worst := diff(exact, snapped)
			t.Logf("%s: %d features, grid %g m for %.2f m pixels: mean difference %.3f, worst %d", v.name, n, grid, res, mean, worst)
			// A thousandth of a pixel or finer moves an antialiased edge's coverage by a level or
			// two at most; the mean over the picture stays well under one level.
			if mean > 0.5 || worst > 48 {
				t.Errorf("snapped picture differs: mean %.3f levels (limit 0.5), worst channel %d (limit 48)", mean, worst)
			}
		})
	}
}

// diff returns the mean absolute difference of two images' RGB channels, in levels, and the
// largest one.
func diff(a, b *image.RGBA) (float64, int) {
	sum, worst := 0, 0
	for i := range a.Pix {
		if i%4 == 3 {
			continue
		}
		d := int(a.Pix[i]) - int(b.Pix[i])
		if d < 0 {
			d = -d
		}
		sum += d
		worst = max(worst, d)
	}
	return float64(sum) / float64(len(a.Pix)/4*3), worst
}
