package testenv

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// mapproxyWMSScript answers one WMS request through MapProxy's WSGI application.
//
//go:embed testdata/mapproxy_wms.py
var mapproxyWMSScript []byte

// MapProxyArcGIS is a MapProxy whose one WMS layer, "rest", draws straight from an ArcGIS REST
// map service through MapProxy's arcgis source (its export operation), with no cache between.
type MapProxyArcGIS struct {
	t      testing.TB
	python string
	dir    string
	config string
}

// NewMapProxyArcGIS writes a mapproxy.yaml into dir whose arcgis source points at service (the
// REST MapServer URL, …/rest/services/<svc>/MapServer) and offers srs, or skips or fails t
// when no python3 can import mapproxy.
func NewMapProxyArcGIS(t testing.TB, dir, service, srs string) *MapProxyArcGIS {
	t.Helper()
	m := &MapProxyArcGIS{t: t, python: mapproxyPython(t), dir: dir, config: filepath.Join(dir, "mapproxy-arcgis.yaml")}
	conf := fmt.Sprintf(`services:
  wms:
    srs: [%[2]q]
    image_formats: ['image/png']
layers:
  - name: rest
    title: ArcGIS REST export
    sources: [rest]
sources:
  rest:
    type: arcgis
    req:
      url: %[1]q
      transparent: false
    supported_srs: [%[2]q]
    supported_formats: ['image/png']
    http:
      client_timeout: 120
globals:
  image:
    paletted: false
`, service, srs)
	if err := os.WriteFile(m.config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// GetMap asks MapProxy's WMS for layer "rest" (WMS 1.1.1, PNG) over bbox in srs at w×h pixels
// and returns the image bytes MapProxy answers.
func (m *MapProxyArcGIS) GetMap(srs string, bbox [4]float64, w, h int) []byte {
	m.t.Helper()
	q := url.Values{
		"SERVICE": {"WMS"}, "VERSION": {"1.1.1"}, "REQUEST": {"GetMap"}, "LAYERS": {"rest"}, "STYLES": {""},
		"SRS": {srs}, "BBOX": {fmt.Sprintf("%v,%v,%v,%v", bbox[0], bbox[1], bbox[2], bbox[3])},
		"WIDTH": {fmt.Sprint(w)}, "HEIGHT": {fmt.Sprint(h)}, "FORMAT": {"image/png"},
	}
	script := filepath.Join(m.dir, "mapproxy_wms.py")
	if err := os.WriteFile(script, mapproxyWMSScript, 0o644); err != nil {
		m.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.python, script, m.config, q.Encode())
	cmd.Dir = m.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		m.t.Fatalf("mapproxy GetMap: %v\nstderr:\n%s", err, stderr.String())
	}
	return out
}
