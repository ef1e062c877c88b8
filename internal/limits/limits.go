// Package limits names the bounds every request must keep and checks the ones that depend on
// the request's shape alone. The api checks them before anything is queued: a request over a
// limit costs no render slot, no scan and no task, and gets a soap:Client fault (HTTP 400 on
// the JSON routes) naming the limit and its value. docs/limits.md is the table of them all,
// with their defaults and configuration keys.
//
// A limit is named by its key in the limits section of the configuration (maxVertices,
// maxElements, ...); that name is the limit label of mapfarm_limit_refusals_total, which
// counts the requests each limit refused.
package limits

import (
	"errors"

	"github.com/mapfarm/mapfarm/internal/quote"
)

// Name is a limit's key in the limits section of the configuration.
type Name string

// The limits whose refusals are counted.
const (
	BodyBytes      Name = "maxBodyBytes"            // request body bytes (HTTP 413)
	Elements       Name = "maxElements"             // XML elements in one SOAP message
	Depth          Name = "maxDepth"                // XML nesting
	DecodedBytes   Name = "maxDecodedBytes"         // memory of one decoded SOAP request
	ImageWidth     Name = "maxImageWidth"           // pixels
	ImageHeight    Name = "maxImageHeight"          // pixels
	ImageDPI       Name = "maxImageDPI"             // ImageDPI and MapArea DPI: 1 to this, 0 meaning 96
	Vertices       Name = "maxVertices"             // vertices of the geometries of one request
	Points         Name = "maxPoints"               // points of one ToMapPoints or FromMapPoints
	IDs            Name = "maxIDs"                  // ids in the id lists of one request
	StringBytes    Name = "maxStringBytes"          // bytes of one string value of a request
	BufferDistance Name = "selectionBufferDistance" // at most the diagonal of the map extent
	ScaleBar       Name = "scaleBar"                // scale bar numbers (docs/limits.md)
	WhereClause    Name = "whereClause"             // where clause length, nesting, IN lists and LIKE patterns
	Statistics     Name = "statistics"              // statistics, group fields, groups and values of one statistics request
	SeedID         Name = "seedIDLength"            // seeding job id characters
	RateLimit      Name = "rateLimit"               // requests per second per client (HTTP 429)
)

// Names lists every limit, for metrics that report each one from zero.
func Names() []Name {
	return []Name{BodyBytes, Elements, Depth, DecodedBytes, ImageWidth, ImageHeight, ImageDPI, Vertices,
		Points, IDs, StringBytes, BufferDistance, ScaleBar, WhereClause, Statistics, SeedID, RateLimit}
}

// Error is a request over a limit. Its message is the whole explanation a client gets: what
// was over, by how much, the limit's value and its name.
type Error struct {
	Limit Name
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// Refuse returns the Error of a request over limit; the values it quotes are cut to
// quote.MaxLen characters.
func Refuse(limit Name, format string, args ...any) *Error {
	return &Error{Limit: limit, Msg: quote.Sprintf(format, args...)}
}

// Of returns the limit err (or an error it wraps) reports a request over.
func Of(err error) (Name, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Limit, true
	}
	return "", false
}

// ErrBusy is wrapped by the refusal of a heavy request that got no slot of the api's heavy lane
// before its deadline (docs/limits.md, "The api's heavy lane"): not the request's fault, so not
// a limit; SOAP answers it with a soap:Server fault of this message, REST with 503.
var ErrBusy = errors.New("the server is busy with other large requests and could not start this one before its deadline; try again later")
