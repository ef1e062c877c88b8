// Package viewer is the map viewer of a map service: an HTML page and the OpenLayers bundle it
// loads, served at /arcgis/rest/services/<svc>/MapServer/viewer and …/viewer/<asset>.
//
// The page shows the service in OpenLayers: the REST tiles where the service has a fused cache,
// the REST export otherwise (and whenever the layer switches differ from the cache's default
// layers), a check box per layer (layers=show:…), and a popup with the attributes the REST
// identify operation answers for a click; a vector mode draws the service's VectorTileServer
// with its style instead. Everything it loads comes from the farm itself.
//
// The assets (assets/viewer.js, assets/viewer.css, assets/fonts.css) are built from web/viewer
// with OpenLayers (BSD-2-Clause, assets/LICENSE-openlayers.md), ol-mapbox-style (the other
// bundled packages in assets/THIRD-PARTY.md) and esbuild by scripts/build-viewer.sh, committed,
// and embedded in the binary, so building mapfarm needs no npm.
package viewer

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed assets/viewer.js assets/viewer.css assets/fonts.css assets/LICENSE-openlayers.md assets/THIRD-PARTY.md
var assetFiles embed.FS

//go:embed viewer.html
var pageTemplate string

// Handler serves the viewer's page and assets.
type Handler struct {
	page   *template.Template
	assets fs.FS
	// started stands for the assets' modification time (embedded files have none), for
	// If-Modified-Since.
	started time.Time
}

// New returns the viewer handler.
func New() *Handler {
	sub, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		panic(err) // the embedded directory exists: a build error otherwise
	}
	return &Handler{page: template.Must(template.New("viewer").Parse(pageTemplate)), assets: sub, started: time.Now()}
}

// Page names the service a viewer page shows.
type Page struct {
	// Service is the service's name.
	Service string
	// ServiceURL is the service's REST path (/arcgis/rest/services/<svc>/MapServer), escaped.
	ServiceURL string
	// Token is the token the page was asked with, if any: the page passes it on to its assets
	// and to every request of the viewer, for a farm that needs tokens.
	Token string
}

// ServePage answers the viewer page for a service.
func (h *Handler) ServePage(w http.ResponseWriter, p Page) {
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, p); err != nil {
		http.Error(w, "rendering the viewer page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// Only the farm's own scripts, styles, images and JSON: nothing from elsewhere.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}

// ServeAsset answers one asset by name (viewer.js, viewer.css, fonts.css, LICENSE-openlayers.md,
// THIRD-PARTY.md); another name is a 404.
func (h *Handler) ServeAsset(w http.ResponseWriter, r *http.Request, name string) {
	if name != path.Base(name) {
		http.NotFound(w, r)
		return
	}
	data, err := fs.ReadFile(h.assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeContent(w, r, name, h.started, bytes.NewReader(data))
}
