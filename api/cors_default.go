package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// The default CORS policy (no Security.CORSOrigins configured), as ArcGIS Server's: the
// read-only routes answer any origin, so that an ArcGIS Maps SDK for JavaScript, esri-leaflet or
// OpenLayers app served from elsewhere can use the services, their tiles and exported images.
// The answer is "Access-Control-Allow-Origin: *" without credentials: tokens travel in a
// parameter or the Authorization header, never a cookie, so "*" exposes nothing a page could
// not fetch itself. The header is on every response of these routes, with an Origin or
// without, so it does not depend on the request and a shared cache may hand it to anyone.

// readOnlyRoute reports whether a route of family f is one of the read-only routes that answer
// any origin by default, and the methods a preflight may ask for on it: the SOAP endpoints and Catalog and
// the REST API (tiles, WMTS and the cache directories among it) take GET and POST (SOAP, long
// REST requests as forms); rendered images, WMS, the OGC APIs and the legislative API take GET
// only.
func readOnlyRoute(f family) (methods string, ok bool) {
	switch f {
	case familySOAP, familyCatalog, familyRESTInfo, familyREST, familyTiles, familyDirectory:
		return "GET, HEAD, POST, OPTIONS", true
	case familyOutput, familyLegislative, familyWMS, familyOGC:
		return "GET, HEAD, OPTIONS", true
	}
	return "", false
}

// anyOriginValue is the header's value, shared by every answer as nosniff is (policy.go).
var anyOriginValue = []string{"*"}

// exposedHeaders are the response headers of the read-only routes a script on another origin
// may read besides the CORS-safelisted ones: a vector tile thinned at its feature limit says so
// in X-Tile-Thinned, and X-Request-Id names a request in the api's log. The legislative API,
// a twin of a Django REST Framework service, answers that service's headers only.
var exposedHeaders = []string{"X-Tile-Thinned, X-Request-Id"}

// expose names exposedHeaders in h for a route of family f, but on the legislative API.
func expose(h http.Header, f family) {
	if f != familyLegislative {
		h["Access-Control-Expose-Headers"] = exposedHeaders
	}
}

// anyOrigin answers any origin on the read-only routes: a preflight with 204 and the methods
// and headers the route takes, every other request with "Access-Control-Allow-Origin: *".
func anyOrigin(c *gin.Context, f family) {
	methods, ok := readOnlyRoute(f)
	if !ok {
		c.Next()
		return
	}
	h := c.Writer.Header()
	h["Access-Control-Allow-Origin"] = anyOriginValue
	expose(h, f)
	if c.Request.Method == http.MethodOptions && c.GetHeader("Origin") != "" && c.GetHeader("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, SOAPAction")
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}
