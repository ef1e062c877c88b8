package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/soapcatalog"
	"github.com/mapfarm/mapfarm/internal/token"
)

// catalogRoute serves the SOAP Catalog (internal/soapcatalog) at /arcgis/services: the
// services of p.Catalog, each at its MapServer endpoint here, and RequiresTokens true while
// tokens are on. A token scoped to some services is listed only those. The security middleware
// applies as to the MapServer endpoints (protected), the body limit is p.MaxBodyBytes, and
// every operation is counted in the SOAP metrics.
func catalogRoute(p Params, soapH *soapHandler) gin.HandlerFunc {
	cat := soapcatalog.New(soapcatalog.Params{Services: p.Catalog, Codec: p.Codec, PublicURL: p.PublicURL,
		RequiresTokens: p.Security.Tokens != nil, MaxBodyBytes: p.MaxBodyBytes, Observe: soapH.observe, Logger: p.Logger})
	return func(c *gin.Context) {
		if c.GetBool(noTokenKey) {
			// Tokens are on and none came: only RequiresTokens and GetTokenServiceURL answer.
			refusal := soapcatalog.Refusal{Status: http.StatusUnauthorized, Fault: soap.ClientFault("Token Required")}
			c.Set("soap_op", cat.ServeWithoutToken(c.Writer, c.Request, refusal))
			return
		}
		var visible soapcatalog.Visible
		if g, ok := c.Get(grantKey); ok {
			visible = g.(token.Grant).Allows
		}
		c.Set("soap_op", cat.Serve(c.Writer, c.Request, visible))
	}
}
