// Package soapcatalog is the SOAP Catalog of the farm, at /arcgis/services, as ArcGIS Server
// 10.7 serves it: the operations a SOAP client calls to find the map services
// (GetServiceDescriptions, GetServiceDescriptionsEx, GetFolders) and to learn how to talk to
// them (GetMessageVersion, GetMessageFormats, RequiresTokens, GetTokenServiceURL), and its WSDL
// at ?wsdl.
//
// The messages are the generated gisxml types, read and written by internal/soap's codec like
// the MapServer endpoint's, and the WSDL is written from the same types (soap.WriteCatalogWSDL).
// The operations are plain methods on Go values (Catalog.Do); Catalog.Serve is the HTTP
// transport around them. Access control (tokens, rate limits, CORS) is the api's middleware.
//
// A service is listed with its name, Type "MapServer", its SOAP endpoint's URL on this server
// (the URL the MapServer WSDL gives as its soap:address), Capabilities "Map,Query,Data", an
// empty ParentType (it is no extension of another service) and its description.
// GetServiceDescriptions lists every service, GetServiceDescriptionsEx those of one folder (""
// or "/": the root), refusing a folder that does not exist with a soap:Client fault. A folder
// is the part of a service name before a "/", as ArcGIS names services in folders; today's
// service definitions allow no "/" in a name (internal/servicedef), so every service sits at
// the root and GetFolders answers none.
package soapcatalog

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// Services lists the map services the Catalog describes; *catalog.Catalog is one.
type Services interface {
	Services() []*catalog.Service
}

// Params configure a Catalog.
type Params struct {
	Services Services
	Codec    *soap.Codec
	// PublicURL is the base URL clients use, no trailing slash: services are listed at
	// PublicURL/arcgis/services/<name>/MapServer, the Catalog's own WSDL gives
	// PublicURL/arcgis/services as its address.
	PublicURL string
	// RequiresTokens is what RequiresTokens answers: true when the farm's token checks are on.
	RequiresTokens bool
	// TokenServiceURL is what GetTokenServiceURL answers while RequiresTokens is true ("" when
	// the farm has no token service to point to); with tokens off it answers "".
	TokenServiceURL string
	// MaxBodyBytes bounds a request body (HTTP 413 over it); 0: no bound.
	MaxBodyBytes int64
	// Observe, when set, is told of every operation run: its name, start and outcome.
	Observe func(op string, start time.Time, err error)
	Logger  *slog.Logger
}

// Catalog answers the Catalog operations. It is safe for concurrent use.
type Catalog struct {
	p    Params
	bufs sync.Pool
}

// New returns the Catalog.
func New(p Params) *Catalog {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	return &Catalog{p: p}
}

// ServiceType is the Type of every listed service.
const ServiceType = "MapServer"

// Capabilities are the capabilities listed for every service: drawing, queries and data
// (QueryFeatureData and its kin return feature data).
const Capabilities = "Map,Query,Data"

// MessageVersion is the SOAP message version this server speaks: ArcGIS 10.7's.
const MessageVersion = gisxml.ArcGISVersion107

// MessageFormat is the message format this server speaks: SOAP only (ArcGIS's binary format
// is not served).
const MessageFormat = gisxml.ServiceCatalogMessageFormatSoap

// Visible reports whether the client may see the named service (a token scoped to some
// services); nil lets every service through.
type Visible func(service string) bool

// ServiceURL is the URL of a service's SOAP endpoint.
func (c *Catalog) ServiceURL(name string) string {
	return c.p.PublicURL + "/arcgis/services/" + name + "/" + ServiceType
}

// Do runs the Catalog operation op on req, a pointer to its gisxml request struct, and
// returns a pointer to its response struct. A request the operation refuses gives a
// *soap.Fault (soap:Client).
func (c *Catalog) Do(op string, req any, visible Visible) (any, error) {
	switch r := req.(type) {
	case *gisxml.GetServiceDescriptions:
		return &gisxml.GetServiceDescriptionsResponse{ServiceDescriptions: c.describe("", true, visible)}, nil
	case *gisxml.GetServiceDescriptionsEx:
		folder := strings.Trim(r.FolderName, "/")
		if folder != "" && !slices.ContainsFunc(c.folders(visible), func(f string) bool { return strings.EqualFold(f, folder) }) {
			return nil, soap.ClientFault("folder %q does not exist", r.FolderName)
		}
		return &gisxml.GetServiceDescriptionsExResponse{ServiceDescriptions: c.describe(folder, false, visible)}, nil
	case *gisxml.GetFolders:
		return &gisxml.GetFoldersResponse{FolderNames: c.folders(visible)}, nil
	case *gisxml.GetMessageVersion:
		return &gisxml.GetMessageVersionResponse{MessageVersion: MessageVersion}, nil
	case *gisxml.GetMessageFormats:
		return &gisxml.GetMessageFormatsResponse{MessageFormats: MessageFormat}, nil
	case *gisxml.RequiresTokens:
		return &gisxml.RequiresTokensResponse{Result: c.p.RequiresTokens}, nil
	case *gisxml.GetTokenServiceURL:
		u := ""
		if c.p.RequiresTokens {
			u = c.p.TokenServiceURL
		}
		return &gisxml.GetTokenServiceURLResponse{TokenServiceURL: u}, nil
	}
	return nil, soap.ClientFault("%s is not an operation of the Catalog", op)
}

// describe lists the services in folder ("" the root), or in every folder when all is set,
// that visible lets through, in the order of the service definitions.
func (c *Catalog) describe(folder string, all bool, visible Visible) gisxml.ArrayOfServiceDescription {
	out := gisxml.ArrayOfServiceDescription{}
	for _, s := range c.p.Services.Services() {
		if visible != nil && !visible(s.Name) {
			continue
		}
		if f, _, ok := strings.Cut(s.Name, "/"); !all && (ok && !strings.EqualFold(f, folder) || !ok && folder != "") {
			continue
		}
		var desc string
		if s.Def != nil {
			desc = s.Def.Description
		}
		out = append(out, &gisxml.ServiceDescription{Name: s.Name, Type: ServiceType, Url: c.ServiceURL(s.Name),
			Capabilities: Capabilities, Description: desc})
	}
	return out
}

// folders lists the folders of the services visible lets through, in the order of the service
// definitions: the part of a service name before its "/".
func (c *Catalog) folders(visible Visible) gisxml.ArrayOfString {
	out := gisxml.ArrayOfString{}
	for _, s := range c.p.Services.Services() {
		if f, _, ok := strings.Cut(s.Name, "/"); ok && (visible == nil || visible(s.Name)) &&
			!slices.ContainsFunc(out, func(g string) bool { return strings.EqualFold(f, g) }) {
			out = append(out, f)
		}
	}
	return out
}

func (c *Catalog) buffer() *bytes.Buffer {
	if b, ok := c.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// Serve answers one request to /arcgis/services: POST a SOAP 1.1 request of a Catalog
// operation, GET ?wsdl the WSDL. visible filters the services listed (nil: all).
// Faults are sent as the MapServer endpoint sends them: HTTP 500 with a soap:Client or
// soap:Server fault, 413 for a body over MaxBodyBytes, 400 for a body that could not be read.
// It returns the operation it ran ("" if none), for the caller's request log.
func (c *Catalog) Serve(w http.ResponseWriter, r *http.Request, visible Visible) (op string) {
	return c.serve(w, r, visible, nil)
}

// Refusal is how a request without credentials is refused: the HTTP status and the fault.
type Refusal struct {
	Status int
	Fault  *soap.Fault
}

// OpenOperation reports whether op is one a client calls before it has a token, which ArcGIS
// answers without one: RequiresTokens and GetTokenServiceURL.
func OpenOperation(op string) bool { return op == "RequiresTokens" || op == "GetTokenServiceURL" }

// ServeWithoutToken answers a request that carries no token while tokens are on: a POST of an
// open operation (OpenOperation) is answered as by Serve; the WSDL, any other operation, and
// anything but a readable POST are refused with refusal.
func (c *Catalog) ServeWithoutToken(w http.ResponseWriter, r *http.Request, refusal Refusal) (op string) {
	if r.Method != http.MethodPost {
		buf := c.buffer()
		defer c.bufs.Put(buf)
		c.fault(w, buf, refusal.Status, refusal.Fault)
		return ""
	}
	return c.serve(w, r, func(string) bool { return false }, &refusal)
}

func (c *Catalog) serve(w http.ResponseWriter, r *http.Request, visible Visible, refusal *Refusal) (op string) {
	buf := c.buffer()
	defer c.bufs.Put(buf)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if !soap.AsksForWSDL(r.URL.RawQuery) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "SOAP Catalog of the map services. POST SOAP 1.1 requests here; the WSDL is at ?wsdl.\n")
			return ""
		}
		c.p.Codec.WriteCatalogWSDL(buf, c.p.PublicURL+"/arcgis/services")
		c.write(w, http.StatusOK, buf)
		return ""
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		c.fault(w, buf, http.StatusMethodNotAllowed, soap.ClientFault("method %s is not allowed: POST SOAP requests, GET ?wsdl", r.Method))
		return ""
	}

	var body io.Reader = r.Body
	if c.p.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, c.p.MaxBodyBytes)
	}
	br := &bodyReader{r: body}
	req, err := c.p.Codec.ReadRequest(br, isCatalogOp)
	if err != nil {
		if br.err == nil {
			_, _ = io.Copy(io.Discard, br) // over the size limit, whatever the XML? read on to find out
		}
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(br.err, &tooLarge):
			le := limits.Refuse(limits.BodyBytes, "request body is larger than the limit of %d bytes (%s)", c.p.MaxBodyBytes, limits.BodyBytes)
			c.fault(w, buf, http.StatusRequestEntityTooLarge, &soap.Fault{Code: soap.FaultClient, String: le.Error(), Err: le})
		case br.err != nil:
			c.fault(w, buf, http.StatusBadRequest, soap.ClientFault("reading the request body: %v", br.err))
		default:
			c.fault(w, buf, http.StatusInternalServerError, soap.AsFault(err))
		}
		return ""
	}
	if refusal != nil && !OpenOperation(req.Operation) {
		c.fault(w, buf, refusal.Status, refusal.Fault)
		return req.Operation
	}
	start := time.Now()
	resp, err := c.Do(req.Operation, req.Body, visible)
	if c.p.Observe != nil {
		c.p.Observe(req.Operation, start, err)
	}
	if err == nil {
		err = c.p.Codec.WriteResponse(buf, req.Operation, resp)
	}
	if err != nil {
		f := soap.AsFault(err)
		if f.Code == soap.FaultServer {
			c.p.Logger.Error("catalog operation failed", "op", req.Operation, "err", err)
		}
		c.fault(w, buf, http.StatusInternalServerError, f)
		return req.Operation
	}
	c.write(w, http.StatusOK, buf)
	return req.Operation
}

func (c *Catalog) fault(w http.ResponseWriter, buf *bytes.Buffer, status int, f *soap.Fault) {
	buf.Reset()
	c.p.Codec.WriteFault(buf, f)
	c.write(w, status, buf)
}

func (c *Catalog) write(w http.ResponseWriter, status int, buf *bytes.Buffer) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// isCatalogOp reports whether op is a Catalog operation: the MapServer's are unknown here.
func isCatalogOp(op string) bool {
	o, ok := gisxml.Load().Operation(op)
	return ok && o.Catalog
}

// bodyReader reads a request body and keeps the first error reading it gave (io.EOF aside),
// so that a body over the size limit, or cut short, is told from bad XML.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}
