package cartography_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/worker"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
)

// localFarm renders maps and scale bars in the test process, as a worker would, and remembers the
// last job.
type localFarm struct {
	*mapservertest.LocalFarm
	last    task.ExportScaleBar
	lastMap task.ExportMap
	jobs    int // tasks handed to the farm
}

// Export renders a map as mapservertest.LocalFarm does (with the worker's own drawing).
func (l *localFarm) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	l.lastMap = job
	l.jobs++
	return l.LocalFarm.Export(ctx, job)
}

// ExportScaleBar draws with the worker's own worker.DrawScaleBar.
func (l *localFarm) ExportScaleBar(ctx context.Context, job task.ExportScaleBar) (task.Result, error) {
	l.last = job
	l.jobs++
	data, f, err := worker.DrawScaleBar(ctx, l.R, job)
	if err != nil {
		return task.Result{Error: err.Error(), ClientError: true}, nil
	}
	return task.Result{Key: job.Key, ContentType: f.ContentType(), Data: data, Size: len(data)}, nil
}

func newCartoFixture(t *testing.T) (*mapservertest.Fixture, *localFarm) {
	t.Helper()
	c := catalogtest.Samples(t)
	lf := &localFarm{LocalFarm: mapservertest.NewLocalFarm(t, c)}
	serve := func(c *catalog.Catalog, lf *localFarm) *mapserver.Server {
		n := 0
		return mapserver.New(mapserver.Params{Catalog: c, Exporter: lf,
			Limits:    mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096},
			NewID:     func() string { n++; return "req" + strings.Repeat("x", n) },
			OutputURL: func(key string) string { return "http://127.0.0.1/" + key },
		})
	}
	f := &mapservertest.Fixture{T: t, Cat: c, Srv: serve(c, lf)}
	if pg, _ := mapservertest.PostGISSamples(t); pg != nil {
		f.PG = &mapservertest.Fixture{T: t, Cat: pg, Srv: serve(pg, &localFarm{LocalFarm: &mapservertest.LocalFarm{Cat: pg, R: lf.R}})}
	}
	return f, lf
}

func TestExportScaleBar(t *testing.T) {
	f, lf := newCartoFixture(t)
	// 1000 px at 96 DPI across 100 km: 1:377,953, so one kilometre is 10 px at 96 DPI.
	md := mapservertest.MapDesc(0, 0, 100000, 50000, 0)
	disp := &gisxml.ImageDisplay{ImageWidth: 1000, ImageHeight: 500, ImageDPI: 96}
	km := gisxml.Kilometers
	mime := &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData}
	r := mapservertest.Must[gisxml.ExportScaleBarResponse](f, "world", "ExportScaleBar", &gisxml.ExportScaleBar{
		ScaleBar:       &gisxml.AlternatingScaleBar{ScaleBarFields: gisxml.ScaleBarFields{Units: &km, Division: operation.Ptr(20.0), Divisions: operation.Ptr(int16(2))}},
		MapDescription: md, MapDisplay: disp,
		ImageDescription: &gisxml.ImageDescription{ImageType: mime, ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 500, ImageHeight: 50, ImageDPI: 96}},
	})
	if got := lf.last.Bar.PixelsPerUnit; got < 9.999 || got > 10.001 {
		t.Errorf("pixels per km = %v, want 10", got)
	}
	if lf.last.Bar.UnitLabel != "Kilometers" || lf.last.Bar.Division != 20 || lf.last.Bar.Divisions != 2 {
		t.Errorf("bar %+v", lf.last.Bar)
	}
	img, err := png.Decode(bytes.NewReader(r.Result.ImageData))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 500 || img.Bounds().Dy() != 50 || r.Result.ImageWidth != 500 {
		t.Errorf("image %v, result %d×%d", img.Bounds(), r.Result.ImageWidth, r.Result.ImageHeight)
	}
	// What a reader sees: along the bar's middle row, a 200 px black division then a 200 px white one.
	row := -1
	for y := 0; y < 50 && row < 0; y++ {
		n := 0
		for x := 0; x < 500; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x1000 {
				n++
			}
		}
		if n > 150 && n < 260 {
			row = y
		}
	}
	if row < 0 {
		t.Fatal("no row with one black division")
	}
	black := 0
	for x := 0; x < 500; x++ {
		if r, _, _, _ := img.At(x, row).RGBA(); r < 0x1000 {
			black++
		}
	}
	if black < 198 || black > 206 {
		t.Errorf("black division is %d px long, want 200", black)
	}

	// Miles at 1:377,953 from a single division bar with a URL; the map's scale at another DPI
	// does not change the bar, whose length is paper length.
	mi := gisxml.Miles
	url := mapservertest.Must[gisxml.ExportScaleBarResponse](f, "world", "ExportScaleBar", &gisxml.ExportScaleBar{
		ScaleBar:       &gisxml.SingleDivisionScaleBar{ScaleBarFields: gisxml.ScaleBarFields{Units: &mi, UnitLabel: operation.Ptr("mi")}},
		MapDescription: md, MapDisplay: disp, BackGroundColor: &gisxml.RgbColor{Red: 255, Green: 255, Blue: 200},
		ImageDescription: &gisxml.ImageDescription{ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 300, ImageHeight: 40, ImageDPI: 192}},
	})
	if !strings.HasPrefix(url.Result.ImageURL, "http://127.0.0.1/outputs/") || url.Result.ImageData != nil {
		t.Errorf("URL result %+v", url.Result)
	}
	if got, want := lf.last.Bar.PixelsPerUnit, 1609.344/377952.756/0.0254*192; got < want*0.999 || got > want*1.001 {
		t.Errorf("pixels per mile at 192 DPI = %v, want %v", got, want)
	}
	if lf.last.Bar.Kind != string(render.ScaleBarSingleDivision) || lf.last.Bar.UnitLabel != "mi" {
		t.Errorf("bar %+v", lf.last.Bar)
	}

	for _, tc := range []struct {
		req  *gisxml.ExportScaleBar
		want string
	}{
		{&gisxml.ExportScaleBar{MapDescription: md, MapDisplay: disp}, "ImageDisplay is required"},
		{&gisxml.ExportScaleBar{MapDescription: md, MapDisplay: disp, ImageDescription: &gisxml.ImageDescription{
			ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImageEMF},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 10, ImageHeight: 10}}}, "not supported"},
		{&gisxml.ExportScaleBar{MapDescription: md, MapDisplay: disp, ScaleBar: &gisxml.AlternatingScaleBar{ScaleBarFields: gisxml.ScaleBarFields{Divisions: operation.Ptr(int16(0))}},
			ImageDescription: &gisxml.ImageDescription{ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 10, ImageHeight: 10}}}, "Divisions 0"},
	} {
		if msg := f.ClientFault("world", "ExportScaleBar", tc.req); !strings.Contains(msg, tc.want) {
			t.Errorf("fault %q does not say %q", msg, tc.want)
		}
	}
}
