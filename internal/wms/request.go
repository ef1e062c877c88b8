package wms

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/kvp"
	"github.com/mapfarm/mapfarm/internal/quote"
)

// version is a WMS version this server speaks.
type version uint8

const (
	version111 version = iota + 1
	version130
)

func (v version) String() string {
	if v == version111 {
		return "1.1.1"
	}
	return "1.3.0"
}

// opKind is a WMS request type.
type opKind uint8

const (
	opCapabilities opKind = iota + 1
	opMap
	opFeatureInfo
	opLegend
)

// exceptionFormat is how GetMap reports an error: XML, or in an image.
type exceptionFormat uint8

const (
	excXML exceptionFormat = iota
	excInImage
	excBlank
)

// request is a WMS request as read from its parameters, before any service data is looked at.
type request struct {
	raw        string // the query string, for logs
	params     kvp.Params
	version    version
	operation  opKind
	exceptions exceptionFormat
}

// readRequest reads the parameters every request has: SERVICE, REQUEST and VERSION (negotiated
// for GetCapabilities, as both standards say), and GetMap's EXCEPTIONS. The request's version
// is set even when it fails, so that the exception is written in the client's version.
func readRequest(r *http.Request) (*request, *Exception) {
	q := &request{raw: r.URL.RawQuery, version: version130}
	p, err := kvp.Read(r.URL.Query())
	if err != nil {
		exc := invalid(err.Error())
		var dup *kvp.DuplicateError
		if errors.As(err, &dup) {
			exc.Locator = strings.ToLower(dup.Name)
		}
		return q, exc
	}
	q.params = p
	v := p.Get("VERSION")
	if v == "" {
		v = p.Get("WMTVER") // the name before 1.1.0, still sent by old clients
	}
	req := p.Get("REQUEST")
	switch {
	case strings.EqualFold(req, "GetCapabilities"), strings.EqualFold(req, "capabilities"):
		q.operation = opCapabilities
		q.version = negotiate(v)
	case strings.EqualFold(req, "GetMap"), strings.EqualFold(req, "map"):
		q.operation = opMap
	case strings.EqualFold(req, "GetFeatureInfo"), strings.EqualFold(req, "feature_info"):
		q.operation = opFeatureInfo
	case strings.EqualFold(req, "GetLegendGraphic"):
		q.operation = opLegend
	case req == "":
		return q, &Exception{Code: "MissingParameterValue", Locator: "request", Message: "REQUEST is required: GetCapabilities, GetMap, GetFeatureInfo or GetLegendGraphic"}
	default:
		q.version = versionOf(v)
		return q, &Exception{Code: "OperationNotSupported", Locator: "request", Message: "REQUEST=" + quoted(req) + " is not offered: GetCapabilities, GetMap, GetFeatureInfo or GetLegendGraphic"}
	}
	if q.operation != opCapabilities {
		switch {
		case v != "":
			q.version = versionOf(v)
			if v != "1.3.0" && v != "1.1.1" && v != "1.1.0" {
				return q, invalid("VERSION must be 1.3.0 or 1.1.1, not " + quoted(v))
			}
		case p.Has("SRS") && !p.Has("CRS"):
			q.version = version111 // a 1.1.1 client that left VERSION out
		case q.operation != opLegend:
			return q, missing("VERSION", "VERSION is required (1.3.0 or 1.1.1)")
		}
	}
	if s := p.Get("SERVICE"); s != "" && !strings.EqualFold(s, "WMS") {
		return q, invalid("SERVICE must be WMS, not " + quoted(s))
	} else if s == "" && q.operation == opCapabilities {
		return q, missing("SERVICE", "SERVICE=WMS is required")
	}
	switch e := strings.ToUpper(p.Get("EXCEPTIONS")); e {
	case "", "XML", "APPLICATION/VND.OGC.SE_XML":
	case "INIMAGE", "APPLICATION/VND.OGC.SE_INIMAGE":
		q.exceptions = excInImage
	case "BLANK", "APPLICATION/VND.OGC.SE_BLANK":
		q.exceptions = excBlank
	default:
		return q, invalid("EXCEPTIONS must be XML, INIMAGE or BLANK, not " + quoted(p.Get("EXCEPTIONS")))
	}
	if q.operation != opMap {
		q.exceptions = excXML
	}
	return q, nil
}

// negotiate is GetCapabilities' version negotiation (WMS 1.3.0 §6.2.4): none asked, or one
// at or above 1.3.0, gets 1.3.0; one below gets the highest version below it this server
// speaks, 1.1.1, which is also the answer to one below every version it speaks.
func negotiate(v string) version {
	if v == "" || compareVersions(v, "1.3.0") >= 0 {
		return version130
	}
	return version111
}

// versionOf is the version a non-capabilities request names: 1.1.x is 1.1.1.
func versionOf(v string) version {
	if strings.HasPrefix(v, "1.1") || strings.HasPrefix(v, "1.0") {
		return version111
	}
	return version130
}

// compareVersions compares dotted version numbers; a part that is not a number counts as 0.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func quoted(s string) string { return strconv.Quote(quote.Clip(s, quote.MaxLen)) }

// positiveInt reads a required positive integer parameter.
func positiveInt(p kvp.Params, name string) (int, *Exception) {
	s := p.Get(name)
	if s == "" {
		return 0, missing(name, name+" is required")
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, invalid(name + " must be a positive integer, not " + quoted(s))
	}
	return n, nil
}
