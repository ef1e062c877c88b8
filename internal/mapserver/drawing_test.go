package mapserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/task"
)

type failingExporter struct{}

func (failingExporter) Export(context.Context, task.ExportMap) (task.Result, error) {
	return task.Result{}, errors.New("no farm in this test")
}

// Only the operations that draw or read drawing descriptions fetch the pictures their request
// names (Drawing, declared in the dispatch table): a QueryRowCount whose layer description names
// a picture by URL fetches nothing and answers, an Identify or an ExportMapImage with it fetches
// it, through Do as through Drawing.
func TestPicturesOnlyForDrawing(t *testing.T) {
	var fetched atomic.Int32
	pics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		http.NotFound(w, r)
	}))
	defer pics.Close()
	s := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Exporter: failingExporter{}, NewID: func() string { return "id" },
		Limits:   mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000},
		Pictures: mapserver.PictureOptions{AllowedHosts: []string{strings.TrimPrefix(pics.URL, "http://")}}})
	svc, _ := s.Service("world")
	call := &mapserver.Call{Service: svc}
	md := func() *gisxml.MapDescription {
		uri := pics.URL + "/fill.png"
		return &gisxml.MapDescription{Name: "Layers",
			MapArea: &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: -2e6, YMin: -2e6, XMax: 2e6, YMax: 2e6}}},
			LayerDescriptions: gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{
				FeatureRenderer: &gisxml.SimpleRenderer{Symbol: &gisxml.PictureFillSymbol{PictureUri: &uri}}}}}}
	}
	display := &gisxml.ImageDisplay{ImageWidth: 100, ImageHeight: 100, ImageDPI: 96}
	ctx := context.Background()

	if _, err := s.Do(ctx, call, "QueryRowCount", &gisxml.QueryRowCount{MapName: "Layers", MapTableDescription: md().LayerDescriptions[0],
		QueryFilter: &gisxml.QueryFilter{WhereClause: "1=1"}}); err != nil {
		t.Errorf("QueryRowCount: %v", err)
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("QueryRowCount fetched %d pictures, want none", n)
	}
	if _, err := s.Do(ctx, call, "Identify", &gisxml.Identify{MapDescription: md(), MapImageDisplay: display, SearchShape: &gisxml.PointN{},
		Tolerance: 2, IdentifyOption: gisxml.IdentifyAllLayers, LayerIDs: gisxml.ArrayOfInt{1}}); err == nil || !strings.Contains(err.Error(), "404") || fetched.Load() != 1 {
		t.Errorf("Identify: %v after %d fetches, want the picture's 404 after one", err, fetched.Load())
	}
	export := &gisxml.ExportMapImage{MapDescription: md(), ImageDescription: &gisxml.ImageDescription{
		ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData}, ImageDisplay: display}}
	if _, err := s.Do(ctx, call, "ExportMapImage", export); err == nil || !strings.Contains(err.Error(), "404") || fetched.Load() != 2 {
		t.Errorf("ExportMapImage by name: %v after %d fetches, want the picture's 404 after two", err, fetched.Load())
	}
	export.MapDescription = md()
	draw := mapserver.Drawing(s, s.Families().Cartography.ExportMapImage)
	if _, err := draw(ctx, call, export); err == nil || !strings.Contains(err.Error(), "404") || fetched.Load() != 3 {
		t.Errorf("ExportMapImage through Drawing: %v after %d fetches, want the picture's 404 after three", err, fetched.Load())
	}
}
