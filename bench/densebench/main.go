// Command densebench times the dense-parcels benchmark's map requests against a running mapfarm
// api (bench/dense.sh starts it): for each service and each view, ExportMapImage over SOAP (the
// PNG inline in the answer) and the REST export route (f=image), both 1024×768 PNG24 at 96 DPI.
// A request is timed from sending it to the last byte of the answer, as curl would; the answer
// is then checked (a PNG of the asked size), untimed. After one untimed warm-up per measure it
// makes -runs requests and prints one line per measure:
//
//	<service> <transport> <view> <median ms> <min ms> <max ms> <bytes>
//
// Views are name=xmin,ymin,xmax,ymax in the services' SR, several separated by ';'.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
)

const width, height, dpi = 1024, 768, 96

type view struct {
	name string
	box  [4]float64
}

func parseViews(s string) ([]view, error) {
	var out []view
	for _, part := range strings.Split(s, ";") {
		name, coords, ok := strings.Cut(part, "=")
		f := strings.Split(coords, ",")
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("view %q: want name=xmin,ymin,xmax,ymax", part)
		}
		v := view{name: name}
		for i, c := range f {
			x, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
			if err != nil {
				return nil, fmt.Errorf("view %q: %w", part, err)
			}
			v.box[i] = x
		}
		out = append(out, v)
	}
	return out, nil
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "api base URL")
	services := flag.String("services", "dense_pg,dense_gpkg", "services to time, comma-separated")
	views := flag.String("views", "", "views: name=xmin,ymin,xmax,ymax;…")
	runs := flag.Int("runs", 7, "timed requests per measure")
	transports := flag.String("transports", "soap,rest", "transports to time, comma-separated")
	ns := flag.String("namespace", "http://schemas.mapfarm.dev/gis/10.7", "message namespace")
	flag.Parse()
	vs, err := parseViews(*views)
	if err != nil {
		fmt.Fprintln(os.Stderr, "densebench:", err)
		os.Exit(2)
	}
	codec := soap.NewCodec(*ns, soap.Limits{})
	ctx := context.Background()
	for _, svc := range strings.Split(*services, ",") {
		cl := &soap.Client{Codec: codec, Endpoint: *url + "/arcgis/services/" + svc + "/MapServer"}
		for _, v := range vs {
			for _, tr := range strings.Split(*transports, ",") {
				var get func() ([]byte, time.Duration, error)
				switch tr {
				case "soap":
					get = func() ([]byte, time.Duration, error) { return soapExport(ctx, cl, v) }
				case "rest":
					u := fmt.Sprintf("%s/arcgis/rest/services/%s/MapServer/export?bbox=%.3f,%.3f,%.3f,%.3f&size=%d,%d&dpi=%d&format=png24&f=image",
						*url, svc, v.box[0], v.box[1], v.box[2], v.box[3], width, height, dpi)
					get = func() ([]byte, time.Duration, error) { return restExport(ctx, u) }
				default:
					fmt.Fprintf(os.Stderr, "densebench: unknown transport %q\n", tr)
					os.Exit(2)
				}
				ms, size, err := measure(*runs, get)
				if err != nil {
					fmt.Fprintf(os.Stderr, "densebench: %s %s %s: %v\n", svc, tr, v.name, err)
					os.Exit(1)
				}
				fmt.Printf("%s %s %s %.1f %.1f %.1f %d\n", svc, tr, v.name, ms[len(ms)/2], ms[0], ms[len(ms)-1], size)
			}
		}
	}
}

// measure makes one warm-up and runs timed requests; it returns the sorted times in ms and the
// size of the last image, after checking every answer is a width×height PNG.
func measure(runs int, get func() ([]byte, time.Duration, error)) ([]float64, int, error) {
	var ms []float64
	size := 0
	for i := range runs + 1 {
		body, took, err := get()
		if err != nil {
			return nil, 0, err
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(body))
		if err != nil {
			return nil, 0, fmt.Errorf("answer is not a PNG: %w", err)
		}
		if cfg.Width != width || cfg.Height != height {
			return nil, 0, fmt.Errorf("PNG is %d×%d, want %d×%d", cfg.Width, cfg.Height, width, height)
		}
		if i > 0 {
			ms = append(ms, float64(took.Microseconds())/1000)
		}
		size = len(body)
	}
	slices.Sort(ms)
	return ms, size, nil
}

func soapExport(ctx context.Context, cl *soap.Client, v view) ([]byte, time.Duration, error) {
	req := &gisxml.ExportMapImage{
		MapDescription: &gisxml.MapDescription{Name: "Layers", MapArea: &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{
			Extent: &gisxml.EnvelopeN{XMin: v.box[0], YMin: v.box[1], XMax: v.box[2], YMax: v.box[3]}}}},
		ImageDescription: &gisxml.ImageDescription{
			ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImagePNG24, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: width, ImageHeight: height, ImageDPI: dpi}},
	}
	hr, err := cl.NewRequest(ctx, "ExportMapImage", req)
	if err != nil {
		return nil, 0, err
	}
	body, took, err := timed(hr)
	if err != nil {
		return nil, 0, err
	}
	var r gisxml.ExportMapImageResponse
	if err := cl.Codec.ReadResponse(bytes.NewReader(body), "ExportMapImage", &r); err != nil {
		return nil, 0, err
	}
	if r.Result == nil {
		return nil, 0, fmt.Errorf("ExportMapImage: no result")
	}
	return r.Result.ImageData, took, nil
}

func restExport(ctx context.Context, url string) ([]byte, time.Duration, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	return timed(hr)
}

// timed sends a request and reads the whole answer, timing both.
func timed(hr *http.Request) ([]byte, time.Duration, error) {
	start := time.Now()
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		return nil, 0, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("%s: %s: %.200s", hr.URL.Path, res.Status, body)
	}
	return body, took, nil
}
