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

// MapProxyCascade is a MapProxy whose one WMS layer, "src", draws straight from one source (an
// ArcGIS REST map service through MapProxy's arcgis source, or a WMS through its wms source),
// with no cache between.
type MapProxyCascade struct {
	t      testing.TB
	python string
	dir    string
	config string
}

// NewMapProxyArcGIS writes a mapproxy.yaml into dir whose arcgis source points at service (the
// REST MapServer URL, …/rest/services/<svc>/MapServer) and offers srs, or skips or fails t
// when no python3 can import mapproxy.
func NewMapProxyArcGIS(t testing.TB, dir, service, srs string) *MapProxyCascade {
	t.Helper()
	return newMapProxyCascade(t, dir, srs, fmt.Sprintf(`type: arcgis
    req:
      url: %q
      transparent: false`, service))
}

// NewMapProxyWMS writes a mapproxy.yaml into dir whose wms source asks the WMS at url (without
// a query) for layers with WMS version (1.1.1 or 1.3.0, which MapProxy sends in that version's
// axis order) and offers srs, or skips or fails t when no python3 can import mapproxy.
func NewMapProxyWMS(t testing.TB, dir, url, layers, version, srs string) *MapProxyCascade {
	t.Helper()
	return newMapProxyCascade(t, dir, srs, fmt.Sprintf(`type: wms
    wms_opts:
      version: %q
    req:
      url: %q
      layers: %q
      transparent: false`, version, url, layers))
}

func newMapProxyCascade(t testing.TB, dir, srs, source string) *MapProxyCascade {
	t.Helper()
	m := &MapProxyCascade{t: t, python: mapproxyPython(t), dir: dir, config: filepath.Join(dir, "mapproxy-cascade.yaml")}
	conf := fmt.Sprintf(`services:
  wms:
    srs: [%[1]q]
    image_formats: ['image/png']
layers:
  - name: src
    title: the source, uncached
    sources: [src]
sources:
  src:
    %[2]s
    supported_srs: [%[1]q]
    supported_formats: ['image/png']
    http:
      client_timeout: 120
globals:
  image:
    paletted: false
`, srs, source)
	if err := os.WriteFile(m.config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// GetMap asks MapProxy's WMS for layer "src" (WMS 1.1.1, PNG) over bbox in srs at w×h pixels
// and returns the image bytes MapProxy answers.
func (m *MapProxyCascade) GetMap(srs string, bbox [4]float64, w, h int) []byte {
	m.t.Helper()
	q := url.Values{
		"SERVICE": {"WMS"}, "VERSION": {"1.1.1"}, "REQUEST": {"GetMap"}, "LAYERS": {"src"}, "STYLES": {""},
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
