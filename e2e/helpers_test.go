package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// This file holds what several tests and benchmarks of the package do alike: send a request,
// run a client script, start a farm of processes, seed the world cache, time concurrent
// clients and report a farm's overhead.

// do sends a request with body and header (name, value pairs) and returns the response with its
// body read.
func do(t *testing.T, method, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// countPixels counts the pixels of img that match, and all its pixels.
func countPixels(img image.Image, match func(color.NRGBA) bool) (n, total int) {
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			total++
			if match(color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)) {
				n++
			}
		}
	}
	return n, total
}

// diffPixels compares a and b pixel by pixel, as NRGBA from their top-left corners, and returns
// how many pixels differ (every pixel of a when their sizes differ) and a description of the
// difference for a failure message, "" when there is none.
func diffPixels(a, b image.Image) (int, string) {
	size := a.Bounds().Size()
	if b.Bounds().Size() != size {
		return size.X * size.Y, fmt.Sprintf("sizes %v and %v", size, b.Bounds().Size())
	}
	n, first := 0, ""
	for y := range size.Y {
		for x := range size.X {
			p := color.NRGBAModel.Convert(a.At(a.Bounds().Min.X+x, a.Bounds().Min.Y+y)).(color.NRGBA)
			q := color.NRGBAModel.Convert(b.At(b.Bounds().Min.X+x, b.Bounds().Min.Y+y)).(color.NRGBA)
			if p != q {
				if n == 0 {
					first = fmt.Sprintf("(%d, %d): %v and %v", x, y, p, q)
				}
				n++
			}
		}
	}
	if n == 0 {
		return 0, ""
	}
	return n, fmt.Sprintf("%d pixels differ, the first at %s", n, first)
}

// outputJSON runs cmd, a test client named name, and decodes the JSON it prints into T; when it
// fails, what it wrote to stderr is shown.
func outputJSON[T any](t *testing.T, name string, cmd *exec.Cmd) T {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr.String())
	}
	var v T
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s output: %v\n%s", name, err, out)
	}
	return v
}

// runScript runs a Python test client (with zeep) and decodes the JSON it prints into T.
func runScript[T any](t *testing.T, script string, args ...string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return outputJSON[T](t, script, exec.CommandContext(ctx, testenv.Python(t), append([]string{script}, args...)...))
}

// referenceWSDL writes the ArcGIS reference WSDL in testdata/file with our namespace and endpoint
// filled in, and returns its path.
func referenceWSDL(t *testing.T, file, endpoint string) string {
	t.Helper()
	ref, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	ref = bytes.ReplaceAll(ref, []byte("{{NAMESPACE}}"), []byte(namespace))
	ref = bytes.ReplaceAll(ref, []byte("{{ADDRESS}}"), []byte(endpoint))
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, ref, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// eachClientWSDL runs test once for each of the two WSDLs the zeep clients of a MapServer
// endpoint are built from, as a subtest: the one the server writes, and the ArcGIS reference
// WSDL with our namespace and the endpoint filled in.
func eachClientWSDL(t *testing.T, endpoint string, test func(t *testing.T, wsdl string)) {
	t.Helper()
	wsdls := []struct{ name, wsdl string }{
		{"served WSDL", endpoint + "?wsdl"},
		{"reference WSDL", referenceWSDL(t, "reference-MapServer-10.7.wsdl", endpoint)},
	}
	for _, w := range wsdls {
		t.Run(w.name, func(t *testing.T) { test(t, w.wsdl) })
	}
}

// sampleServices returns services/services.yaml with its GeoPackage paths made absolute, so that
// a changed copy may live elsewhere, and the absolute path of the data folder they are in.
func sampleServices(tb testing.TB) (yaml, data string) {
	tb.Helper()
	sample, err := os.ReadFile("../services/services.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	data, err = filepath.Abs("../data")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.ReplaceAll(string(sample), "../data/", data+"/"), data
}

// withServices returns a farm option that serves the service definitions yaml, from a file of
// the test's own.
func withServices(tb testing.TB, yaml string) func(*config.Config) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "services.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	return func(c *config.Config) { c.Services = path }
}

// soapEnv wraps body, an operation element of namespace gis, in a SOAP envelope.
func soapEnv(body string) string {
	return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gis="` +
		namespace + `"><soap:Body>` + body + `</soap:Body></soap:Envelope>`
}

// imageDescription is an ImageDescription of a w×h PNG24 image at dpi, returned as a URL.
func imageDescription(w, h int, dpi string) string {
	return `<ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
		`<ImageDisplay><ImageHeight>` + strconv.Itoa(h) + `</ImageHeight><ImageWidth>` + strconv.Itoa(w) + `</ImageWidth><ImageDPI>` + dpi + `</ImageDPI></ImageDisplay></ImageDescription>`
}

// extent is a MapArea of the extent (xmin, ymin)–(xmax, ymax).
func extent(xmin, ymin, xmax, ymax string) string {
	return `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN"><XMin>` + xmin + `</XMin><YMin>` + ymin + `</YMin><XMax>` + xmax + `</XMax><YMax>` + ymax + `</YMax></Extent></MapArea>`
}

// exportBody is an ExportMapImage of the world map; area is a MapArea element or "".
func exportBody(w, h int, dpi, area string) string {
	return soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name>` + area + `</MapDescription>` + imageDescription(w, h, dpi) + `</gis:ExportMapImage>`)
}

// tileBody is a GetMapTile of the world map's tile (level, row, col).
func tileBody(level, row, col int) string {
	return soapEnv(fmt.Sprintf(`<gis:GetMapTile><MapName>Layers</MapName><Level>%d</Level><Row>%d</Row><Column>%d</Column></gis:GetMapTile>`, level, row, col))
}

// processFarm is a farm of separate processes on the test Redis and MinIO.
type processFarm struct {
	base string      // the api's URL
	env  []string    // the processes' settings, for more processes (or tools) on the same farm
	cmds []*exec.Cmd // the processes, in the order of their roles
}

// startProcessFarm builds mapfarm and runs each of roles as its own process, with farmEnv's
// settings and then extra (a later setting wins), until the test ends; it returns once the api is
// ready.
func startProcessFarm(tb testing.TB, extra []string, roles ...string) processFarm {
	tb.Helper()
	bin := buildBinary(tb, "github.com/mapfarm/mapfarm")
	addr := freePort(tb)
	f := processFarm{base: "http://" + addr, env: append(farmEnv(tb, addr), extra...)}
	for _, role := range roles {
		f.cmds = append(f.cmds, startProcess(tb, bin, role, f.env))
	}
	waitReady(tb, f.base+"/readyz", 60*time.Second)
	return f
}

// worldExtent is the whole Web Mercator world, in metres.
func worldExtent() []float64 {
	const r = 20037508.342789244
	return []float64{-r, -r, r, r}
}

// aoiTiles returns the tiles, as (row, column), of level level of the world cache (2^level
// tiles a side over the whole Web Mercator world) that cover aoi.
func aoiTiles(aoi []float64, level int) [][2]int {
	const r = 20037508.342789244
	size := 2 * r / float64(int(1)<<level)
	var tiles [][2]int
	for row := int((r - aoi[3]) / size); row <= int((r-aoi[1])/size); row++ {
		for col := int((aoi[0] + r) / size); col <= int((aoi[2]+r)/size); col++ {
			tiles = append(tiles, [2]int{row, col})
		}
	}
	return tiles
}

// seedAndWait submits a seeding job and waits (bounded) for it to end done without failures.
func seedAndWait(t testing.TB, base string, req seed.Request) seed.Status {
	t.Helper()
	id := submitSeed(t, base, req)
	st := waitJob(t, base, id, 5*time.Minute, nil)
	if st.State != seed.StateDone || st.Failed != 0 {
		t.Fatalf("job %s (%s %s) ended %s: done %d failed %d of %d (%s)", id, req.Service, req.Mode, st.State, st.Done, st.Failed, st.Total, st.Error)
	}
	return st
}

// timedClients runs op(i) for each i from 0 to b.N-1 from clients concurrent goroutines, each
// taking the next i, with the benchmark's timer reset before and stopped after, and returns how
// long that took. A client stops at its first error, and errors fail the benchmark.
func timedClients(b *testing.B, clients int, op func(i int) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if err := op(int(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// overheadOf reads resp, the answer to a render request sent at start, to its end and returns
// what the farm added to the render, in ms: the time to the last byte minus the worker's draw and
// encode (Server-Timing render); and the body. It fails b unless resp is 200 OK with that timing.
func overheadOf(b *testing.B, start time.Time, resp *http.Response) (float64, []byte) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	total := time.Since(start)
	m := renderDur.FindStringSubmatch(resp.Header.Get("Server-Timing"))
	if err != nil || resp.StatusCode != http.StatusOK || m == nil {
		b.Fatalf("%s, %v, Server-Timing %q: %.300s", resp.Status, err, resp.Header.Get("Server-Timing"), body)
	}
	render, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		b.Fatalf("Server-Timing %q: %v", resp.Header.Get("Server-Timing"), err)
	}
	return float64(total)/float64(time.Millisecond) - render, body
}

// reportOverheads reports the median and the 99th percentile of a farm's overheads (ms), as
// overhead-p50-ms and overhead-p99-ms.
func reportOverheads(b *testing.B, overheads []float64) {
	sort.Float64s(overheads)
	b.ReportMetric(overheads[len(overheads)/2], "overhead-p50-ms")
	b.ReportMetric(overheads[len(overheads)*99/100], "overhead-p99-ms")
}
