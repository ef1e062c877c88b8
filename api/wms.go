package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/ogcapi"
)

// wmsRoute is ArcGIS Server's address of a map service's WMSServer capability; it is under the
// SOAP endpoint's path, which routeOf tells apart (familyWMS).
const wmsRoute = "/arcgis/services/:service/MapServer/WMSServer"

// routeWMS serves WMS (internal/wms) for GET and HEAD.
func routeWMS(e *gin.Engine, h http.Handler) {
	serve := func(c *gin.Context) {
		r := c.Request.WithContext(mapserver.WithRequestID(c.Request.Context(), requestIDOf(c)))
		r.SetPathValue("service", c.Param("service"))
		h.ServeHTTP(c.Writer, r)
	}
	e.GET(wmsRoute, serve)
	e.HEAD(wmsRoute, serve)
}

// routeOGC serves the OGC APIs (internal/ogcapi) for GET and HEAD under /ogc, with the request
// id in the context as WMS has it.
func routeOGC(e *gin.Engine, h http.Handler) {
	serve := func(c *gin.Context) {
		h.ServeHTTP(c.Writer, c.Request.WithContext(mapserver.WithRequestID(c.Request.Context(), requestIDOf(c))))
	}
	for _, path := range []string{ogcapi.Prefix, ogcapi.Prefix + "/*path"} {
		e.GET(path, serve)
		e.HEAD(path, serve)
	}
}
