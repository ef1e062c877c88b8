package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/wmts"
)

// tileRoutePrefix is the route prefix of a REST map service, under which tiles and WMTS are.
const tileRoutePrefix = "/arcgis/rest/services/:service/MapServer"

// routeTiles serves the REST tile resource and WMTS (internal/wmts) for GET and HEAD. The
// handler calls the typed cache operations, outside the Admission (docs/render-lanes.md).
func routeTiles(e *gin.Engine, h *wmts.Handler) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		e.Handle(method, tileRoutePrefix+"/tile/:level/:row/:col", func(c *gin.Context) {
			h.ServeTileAt(c.Writer, c.Request, c.Param("service"), c.Param("level"), c.Param("row"), c.Param("col"))
		})
		e.Handle(method, tileRoutePrefix+"/WMTS", tileHandler(h.ServeKVP, "service"))
		e.Handle(method, tileRoutePrefix+"/WMTS/*path", func(c *gin.Context) {
			h.ServeRESTAt(c.Writer, c.Request, c.Param("service"), c.Param("path"))
		})
	}
}

// vectorTileRoutePrefix is the route of a service's VectorTileServer.
const vectorTileRoutePrefix = "/arcgis/rest/services/:service/VectorTileServer"

// routeVectorTiles serves the VectorTileServer resources (internal/vectortileserver) for GET and
// HEAD: the root, and every resource below it by its path. The handler runs its on-demand tile
// builds through Admission.TileBuild (internal/app wires it), bounded by the encoder's own
// limits (docs/vector-tiles.md).
func routeVectorTiles(e *gin.Engine, h http.Handler) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		e.Handle(method, vectorTileRoutePrefix, tileHandler(h.ServeHTTP, "service"))
		e.Handle(method, vectorTileRoutePrefix+"/*path", tileHandler(h.ServeHTTP, "service", "path"))
	}
}

// tileHandler runs a net/http handler with gin's path parameters as the request's path
// values; the request id is in its X-Request-Id header (requestLog), where wmts reads it.
func tileHandler(h http.HandlerFunc, names ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		for _, n := range names {
			r.SetPathValue(n, c.Param(n))
		}
		h(c.Writer, r)
	}
}
