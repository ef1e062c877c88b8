package wms_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/wms"
)

// instantFarm answers every drawing at once with the same PNG, so that a benchmark measures
// the front end and the operation, not the drawing.
type instantFarm struct{ png []byte }

func (f instantFarm) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	return task.Result{Key: job.Key, ContentType: "image/png", Data: f.png, Size: len(f.png)}, nil
}

func blankPNG(b testing.TB, w, h int) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// GetMap's overhead over ExportMapImage, called as a typed operation with the request GetMap
// makes: the median of each, run alternately, and their difference (overhead-ns; the target is
// 1 ms). The farm answers at once, so that the drawing, the same for both, does not drown it.
func BenchmarkGetMapOverhead(b *testing.B) {
	c := catalogtest.Samples(b)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096},
		Exporter: instantFarm{png: blankPNG(b, 512, 512)}, NewID: mapservertest.NewIDs()})
	mux := http.NewServeMux()
	mux.Handle("/arcgis/services/{service}/MapServer/WMSServer", wms.New(wms.Params{Server: ops, PublicURL: "http://farm.test"}))
	target := wmsURL("world", "SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "CRS", "EPSG:3857",
		"BBOX", "-2000000,-2000000,2000000,2000000", "WIDTH", "512", "HEIGHT", "512", "FORMAT", "image/png")
	svc, _ := c.Service("world")
	info, err := ops.Families().Information.GetServerInfo(context.Background(), &mapserver.Call{Service: svc}, &gisxml.GetServerInfo{MapName: "Layers"})
	if err != nil {
		b.Fatal(err)
	}
	export := mapserver.Drawing(ops, ops.Families().Cartography.ExportMapImage)
	direct := func() {
		md := *info.Result.DefaultMapDescription
		md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: -2e6, YMin: -2e6, XMax: 2e6, YMax: 2e6}}}
		if _, err := export(context.Background(), &mapserver.Call{Service: svc}, &gisxml.ExportMapImage{MapDescription: &md, ImageDescription: &gisxml.ImageDescription{
			ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 512, ImageHeight: 512, ImageDPI: 96}}}); err != nil {
			b.Fatal(err)
		}
	}
	viaWMS := func() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	var tw, td []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		viaWMS()
		td, tw = append(td, t1.Sub(t0)), append(tw, time.Since(t1))
	}
	slices.Sort(td)
	slices.Sort(tw)
	mw, md := tw[len(tw)/2], td[len(td)/2]
	b.ReportMetric(float64(md.Nanoseconds()), "export-median-ns")
	b.ReportMetric(float64(mw.Nanoseconds()), "getmap-median-ns")
	b.ReportMetric(float64((mw - md).Nanoseconds()), "overhead-median-ns")
}

// GetCapabilities of a service of 100 layers (the target is 20 ms).
func BenchmarkCapabilities100Layers(b *testing.B) {
	dir := b.TempDir()
	gpkg, err := filepath.Abs(filepath.Join(filepath.Dir(catalogtest.SamplesPath(b)), "..", "data", "sample", "world_countries_50m_3857.gpkg"))
	if err != nil {
		b.Fatal(err)
	}
	var y strings.Builder
	y.WriteString("services:\n  - name: hundred\n    maps:\n      - name: Layers\n        spatialReference: 3857\n        layers:\n")
	for i := range 100 {
		fmt.Fprintf(&y, "          - id: %d\n            name: Countries %d\n            source: {geopackage: %s, table: countries}\n"+
			"            fields: [fid, NAME]\n            renderer: {type: simple, label: Country, symbol: {type: simpleFill, style: solid, color: [232, 228, %d]}}\n", i, i, gpkg, i)
	}
	path := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(path, []byte(y.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	c := catalogtest.Open(b, path)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}, NewID: mapservertest.NewIDs()})
	h := wms.New(wms.Params{Server: ops, PublicURL: "http://farm.test"})
	mux := http.NewServeMux()
	mux.Handle("/arcgis/services/{service}/MapServer/WMSServer", h)
	target := wmsURL("hundred", "SERVICE", "WMS", "REQUEST", "GetCapabilities", "VERSION", "1.3.0")
	var ts []time.Duration
	for b.Loop() {
		t0 := time.Now()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		ts = append(ts, time.Since(t0))
		if rec.Code != 200 || strings.Count(rec.Body.String(), "<Layer ") != 101 {
			b.Fatalf("%d, %d layers: %.300s", rec.Code, strings.Count(rec.Body.String(), "<Layer "), rec.Body)
		}
	}
	slices.Sort(ts)
	b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds()), "median-ns")
}
