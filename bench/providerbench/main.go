// Command providerbench times the providers benchmark's SOAP requests against a running mapfarm
// api (bench/providers.sh starts it): for each service, a 1% envelope QueryFeatureCount, the
// first page of 1,000 features of that envelope (QueryFeatureData, capped by maxRecordCount),
// and ExportMapImage at a street-level (1:2,000) and a region-level (1:500,000) scale. It prints
// one line per measure: the median of -runs timed requests after one untimed warm-up. A request
// is timed from sending it to reading the last byte of the answer, as curl would; decoding it to
// check the answer is not timed.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// The region bench/parcelgen fills, in EPSG:3857.
const (
	originX, originY = -10915000.0, 3480000.0
	regionSize       = 100_000.0
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "api base URL")
	services := flag.String("services", "parcels_gpkg,parcels_pg", "services to time, comma-separated")
	runs := flag.Int("runs", 7, "timed requests per measure")
	ns := flag.String("namespace", "http://schemas.mapfarm.dev/gis/10.7", "message namespace")
	flag.Parse()
	codec := soap.NewCodec(*ns, soap.Limits{})
	cx, cy := originX+regionSize/2, originY+regionSize/2
	onePercent := &gisxml.EnvelopeN{XMin: cx - regionSize/20, YMin: cy - regionSize/20, XMax: cx + regionSize/20, YMax: cy + regionSize/20}
	filter := &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: onePercent, SearchOrder: gisxml.SearchOrderSpatial}
	export := func(scale float64) *gisxml.ExportMapImage {
		const w, h, dpi = 1024, 768, 96.0
		half := scale * 0.0254 / dpi * w / 2 // metres per pixel × half the width
		halfH := half * h / w
		return &gisxml.ExportMapImage{
			MapDescription: &gisxml.MapDescription{Name: "Layers", MapArea: &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{
				Extent: &gisxml.EnvelopeN{XMin: cx - half, YMin: cy - halfH, XMax: cx + half, YMax: cy + halfH}}}},
			ImageDescription: &gisxml.ImageDescription{
				ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImagePNG24, ImageReturnType: gisxml.ImageReturnMimeData},
				ImageDisplay: &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: dpi}},
		}
	}
	ctx := context.Background()
	for _, svc := range strings.Split(*services, ",") {
		cl := &soap.Client{Codec: codec, Endpoint: *url + "/arcgis/services/" + svc + "/MapServer"}
		measure := func(what string, call func(timed *time.Duration) (string, error)) {
			var ms []float64
			var note string
			for i := range *runs + 1 {
				var took time.Duration
				n, err := call(&took)
				if err != nil {
					fmt.Fprintf(os.Stderr, "providerbench: %s %s: %v\n", svc, what, err)
					os.Exit(1)
				}
				if i > 0 {
					ms = append(ms, float64(took.Microseconds())/1000)
				}
				note = n
			}
			slices.Sort(ms)
			fmt.Printf("%-14s %-34s median %9.1f ms  (min %.1f, max %.1f; %s)\n", svc, what, ms[len(ms)/2], ms[0], ms[len(ms)-1], note)
		}
		measure("1% envelope count", func(took *time.Duration) (string, error) {
			var r gisxml.QueryFeatureCountResponse
			err := call(ctx, cl, took, "QueryFeatureCount", &gisxml.QueryFeatureCount{MapName: "Layers", LayerID: 0, QueryFilter: filter}, &r)
			return fmt.Sprintf("%d features", r.Result), err
		})
		measure("1% envelope first page", func(took *time.Duration) (string, error) {
			var r gisxml.QueryFeatureDataResponse
			err := call(ctx, cl, took, "QueryFeatureData", &gisxml.QueryFeatureData{MapName: "Layers", LayerID: 0, QueryFilter: filter}, &r)
			n := 0
			if r.Result != nil {
				n = len(r.Result.Records)
			}
			return fmt.Sprintf("%d records", n), err
		})
		for _, sc := range []struct {
			name  string
			scale float64
		}{{"ExportMapImage 1:2,000 (street)", 2000}, {"ExportMapImage 1:500,000 (region)", 500000}} {
			measure(sc.name, func(took *time.Duration) (string, error) {
				var r gisxml.ExportMapImageResponse
				err := call(ctx, cl, took, "ExportMapImage", export(sc.scale), &r)
				size := 0
				if r.Result != nil {
					size = len(r.Result.ImageData)
				}
				return fmt.Sprintf("%d-byte PNG", size), err
			})
		}
	}
}

// call sends one request, times it to the last byte of the answer, then decodes the answer.
func call(ctx context.Context, cl *soap.Client, took *time.Duration, op string, req, resp any) error {
	hr, err := cl.NewRequest(ctx, op, req)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	*took = time.Since(start)
	if err != nil {
		return err
	}
	return cl.Codec.ReadResponse(bytes.NewReader(body), op, resp)
}
