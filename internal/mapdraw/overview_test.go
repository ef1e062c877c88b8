package mapdraw

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// countingSource counts the rows a source's scans yield.
type countingSource struct {
	feature.Source
	rows atomic.Int64
}

func (s *countingSource) Scan(ctx context.Context, q *feature.Query, fn func(*feature.Feature) error) error {
	return s.Source.Scan(ctx, q, func(f *feature.Feature) error {
		s.rows.Add(1)
		return fn(f)
	})
}

func (s *countingSource) Version(ctx context.Context) (string, error) {
	return s.Source.(feature.Versioned).Version(ctx)
}

// TestOverviewDraw draws 120 × 120 parcels (48 m squares on a 50 m grid, as bench/dense.sh
// draws a million) from a GeoPackage through the catalog: a region view, where every parcel is
// smaller than a pixel, is drawn from the layer's overview after the first draw (no row read)
// and looks like the drawing from the rows; a drawing without Request.Overviews (a cache's
// tiles) and a street view still read the rows. (A changed source rebuilds the overview:
// feature's TestOverview.)
func TestOverviewDraw(t *testing.T) {
	const side, cell, size = 120, 50.0, 48.0
	ox, oy := -10915000.3712, 3480000.6134
	dir := t.TempDir()
	path := filepath.Join(dir, "dense.gpkg")
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
	services := filepath.Join(dir, "services.yaml")
	yaml := fmt.Sprintf(`services:
  - name: dense
    maps:
      - name: Layers
        spatialReference: 3857
        layers:
          - id: 0
            name: Parcels
            geometryType: polygon
            source: {geopackage: %s, table: parcels}
            renderer:
              type: simple
              symbol: {type: simpleFill, style: solid, color: [200, 200, 150], outline: {color: [80, 80, 80], width: 0.375}}
`, path)
	if err := os.WriteFile(services, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := servicedef.Load(services, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	svc, _ := c.Service("dense")
	m, _ := svc.Map("Layers")
	l := m.Layers[0]
	if l.Overview == nil || l.Overview.Source() != l.Data {
		t.Fatal("the catalog gave the GeoPackage polygon layer no overview of its data")
	}
	// Count what the draws read.
	src := &countingSource{Source: l.Data}
	l.Data, l.Overview = src, feature.NewOverview(src, feature.NewOverviewBudget(0))
	full := side * cell
	region := render.View{Extent: orb.Bound{Min: orb.Point{ox - full/6, oy}, Max: orb.Point{ox + full*7/6, oy + full}}, Width: 128, Height: 96, DPI: 96}
	street := render.View{Extent: orb.Bound{Min: orb.Point{ox + 1000, oy + 1000}, Max: orb.Point{ox + 1512, oy + 1384}}, Width: 256, Height: 192, DPI: 96}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	draw := func(v render.View, overview bool) (*image.RGBA, int64) {
		t.Helper()
		// Without Overviews (as cache tiles are drawn), the layer keeps its overview unused.
		ml := *m
		ml.Layers = []*catalog.Layer{l}
		before := src.rows.Load()
		data, err := Draw(context.Background(), r, Request{Map: &ml, View: v, Layers: []LayerState{{ID: 0, Visible: true}}, Format: render.PNG, Overviews: overview})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rgba := image.NewRGBA(img.Bounds())
		for y := range img.Bounds().Dy() {
			for x := range img.Bounds().Dx() {
				rgba.Set(x, y, img.At(x, y))
			}
		}
		return rgba, src.rows.Load() - before
	}
	check := func(what string, a, b *image.RGBA) {
		t.Helper()
		mean, worst := pixelDiff(a, b)
		t.Logf("%s: mean difference %.4f levels, worst channel %d", what, mean, worst)
		// The same footprints, from float32 boxes instead of the rows' snapped vertices: a
		// level at most where a box edge rounds the other way.
		if mean > 0.05 || worst > 2 {
			t.Errorf("%s: the overview's picture differs from the rows': mean %.4f levels (limit 0.05), worst channel %d (limit 2)", what, mean, worst)
		}
	}

	first, n1 := draw(region, true)
	second, n2 := draw(region, true)
	rows, n3 := draw(region, false)
	t.Logf("region: %d rows read by the first draw, %d by the second, %d without Overviews", n1, n2, n3)
	if n1 != side*side || n2 != 0 || n3 != side*side {
		t.Errorf("region rows read: first draw %d (want %d, the overview's build), second %d (want 0), without Overviews %d (want %d)", n1, side*side, n2, n3, side*side)
	}
	check("region, first draw", first, rows)
	check("region, second draw", second, rows)

	sOv, ns := draw(street, true)
	sRows, _ := draw(street, false)
	if ns == 0 {
		t.Error("the street view (parcels of 24 pixels) read no rows: drawn from footprints")
	}
	check("street", sOv, sRows)

	// An edit in place: half of the parcels go. The next region view must show it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM parcels WHERE gid > ?`, side*side/2); err != nil {
		t.Fatal(err)
	}
	db.Close()
	edited, ne := draw(region, true)
	editedRows, _ := draw(region, false)
	if ne != side*side/2 {
		t.Errorf("the region view after an edit read %d rows (want %d: the overview rebuilt)", ne, side*side/2)
	}
	check("region after an edit", edited, editedRows)
	if mean, _ := pixelDiff(edited, first); mean < 1 {
		t.Errorf("the region view after half the parcels were deleted differs by %.3f levels from the one before", mean)
	}
}

// pixelDiff returns the mean absolute difference of two images' RGB channels, in levels, and
// the largest one.
func pixelDiff(a, b *image.RGBA) (float64, int) {
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
