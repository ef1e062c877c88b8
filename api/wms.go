package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/mapserver"
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
