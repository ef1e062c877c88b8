// Command densebench times the dense-parcels benchmark's map requests against a running mapfarm
// api (bench/dense.sh starts it): for each service and each view, ExportMapImage over SOAP (the
// PNG inline in the answer) and the REST export route (f=image), both 1024×768 PNG24 at 96 DPI.
// A request is timed from sending it to the last byte of the answer, as curl would; the answer
// is then checked (a PNG of the asked size), untimed. After one untimed warm-up request of every
// measure it makes -runs rounds of one timed request of each, the order turning each round, and
// prints one line per measure:
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
	var ms []*measure
	for _, svc := range strings.Split(*services, ",") {
		cl := &soap.Client{Codec: codec, Endpoint: *url + "/arcgis/services/" + svc + "/MapServer"}
		for _, v := range vs {
			for _, tr := range strings.Split(*transports, ",") {
				m := &measure{name: svc + " " + tr + " " + v.name}
				switch tr {
				case "soap":
					m.get = func() ([]byte, time.Duration, error) { return soapExport(ctx, cl, v) }
				case "rest":
					u := fmt.Sprintf("%s/arcgis/rest/services/%s/MapServer/export?bbox=%.3f,%.3f,%.3f,%.3f&size=%d,%d&dpi=%d&format=png24&f=image",
						*url, svc, v.box[0], v.box[1], v.box[2], v.box[3], width, height, dpi)
					m.get = func() ([]byte, time.Duration, error) { return restExport(ctx, u) }
				default:
					fmt.Fprintf(os.Stderr, "densebench: unknown transport %q\n", tr)
					os.Exit(2)
				}
				ms = append(ms, m)
			}
		}
	}
	if err := run(ms, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "densebench:", err)
		os.Exit(1)
	}
	for _, m := range ms {
		slices.Sort(m.ms)
		fmt.Printf("%s %.1f %.1f %.1f %d\n", m.name, m.ms[len(m.ms)/2], m.ms[0], m.ms[len(m.ms)-1], m.size)
	}
}

// measure is one service, transport and view: its request and its times in ms.
type measure struct {
	name string
	get  func() ([]byte, time.Duration, error)
	ms   []float64
	size int // of the last image
}

// run makes one untimed warm-up request of every measure, then runs rounds: one timed request
// of each measure a round, the order turning each round, so that a farm still warming up (the
// first requests of a process, its pools and heap) or a change of the machine's load weighs on
// every measure alike, not on whichever came first. Every answer is checked to be a
// width×height PNG.
func run(ms []*measure, runs int) error {
	for round := range runs + 1 {
		for i := range ms {
			m := ms[(i+round)%len(ms)]
			body, took, err := m.get()
			if err == nil {
				err = checkPNG(body)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if round > 0 {
				m.ms = append(m.ms, float64(took.Microseconds())/1000)
			}
			m.size = len(body)
		}
	}
	return nil
}

// checkPNG reports whether an answer is a width×height PNG.
func checkPNG(body []byte) error {
	cfg, err := png.DecodeConfig(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("answer is not a PNG: %w", err)
	}
	if cfg.Width != width || cfg.Height != height {
		return fmt.Errorf("PNG is %d×%d, want %d×%d", cfg.Width, cfg.Height, width, height)
	}
	return nil
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
