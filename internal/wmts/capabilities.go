package wmts

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
)

// The capabilities document, in the wire order of the WMTS 1.0.0 schema (wmtsGetCapabilities_
// response.xsd). Prefixed names are written as they are: the root declares the prefixes.
type xmlCapabilities struct {
	XMLName        xml.Name `xml:"Capabilities"`
	NS             string   `xml:"xmlns,attr"`
	NSOWS          string   `xml:"xmlns:ows,attr"`
	NSXlink        string   `xml:"xmlns:xlink,attr"`
	NSXSI          string   `xml:"xmlns:xsi,attr"`
	SchemaLocation string   `xml:"xsi:schemaLocation,attr"`
	Version        string   `xml:"version,attr"`

	ServiceIdentification struct {
		Title              string `xml:"ows:Title"`
		ServiceType        string `xml:"ows:ServiceType"`
		ServiceTypeVersion string `xml:"ows:ServiceTypeVersion"`
	} `xml:"ows:ServiceIdentification"`
	Operations []xmlOperation `xml:"ows:OperationsMetadata>ows:Operation"`
	Contents   struct {
		Layers []xmlLayer         `xml:"Layer"`
		Sets   []xmlTileMatrixSet `xml:"TileMatrixSet"`
	} `xml:"Contents"`
	ServiceMetadataURL struct {
		Href string `xml:"xlink:href,attr"`
	} `xml:"ServiceMetadataURL"`
}

type xmlOperation struct {
	Name string   `xml:"name,attr"`
	Gets []xmlGet `xml:"ows:DCP>ows:HTTP>ows:Get"`
}

type xmlGet struct {
	Href     string `xml:"xlink:href,attr"`
	Encoding string `xml:"ows:Constraint>ows:AllowedValues>ows:Value"`
}

type xmlBBox struct {
	CRS   string `xml:"crs,attr,omitempty"`
	Lower string `xml:"ows:LowerCorner"`
	Upper string `xml:"ows:UpperCorner"`
}

type xmlLayer struct {
	Title      string   `xml:"ows:Title"`
	Identifier string   `xml:"ows:Identifier"`
	WGS84      *xmlBBox `xml:"ows:WGS84BoundingBox"`
	BBox       *xmlBBox `xml:"ows:BoundingBox"`
	Style      struct {
		IsDefault  bool   `xml:"isDefault,attr"`
		Title      string `xml:"ows:Title"`
		Identifier string `xml:"ows:Identifier"`
	} `xml:"Style"`
	Format      string    `xml:"Format"`
	Links       []xmlLink `xml:"TileMatrixSetLink"`
	ResourceURL struct {
		Format       string `xml:"format,attr"`
		ResourceType string `xml:"resourceType,attr"`
		Template     string `xml:"template,attr"`
	} `xml:"ResourceURL"`
}

// xmlLink names one tile matrix set of a layer (one per link, as the schema has it).
type xmlLink struct {
	Set string `xml:"TileMatrixSet"`
}

type xmlTileMatrixSet struct {
	Title             string          `xml:"ows:Title"`
	Abstract          string          `xml:"ows:Abstract,omitempty"`
	Identifier        string          `xml:"ows:Identifier"`
	SupportedCRS      string          `xml:"ows:SupportedCRS"`
	WellKnownScaleSet string          `xml:"WellKnownScaleSet,omitempty"`
	Matrices          []xmlTileMatrix `xml:"TileMatrix"`
}

type xmlTileMatrix struct {
	Identifier       string `xml:"ows:Identifier"`
	ScaleDenominator string `xml:"ScaleDenominator"`
	TopLeftCorner    string `xml:"TopLeftCorner"`
	TileWidth        int    `xml:"TileWidth"`
	TileHeight       int    `xml:"TileHeight"`
	MatrixWidth      int    `xml:"MatrixWidth"`
	MatrixHeight     int    `xml:"MatrixHeight"`
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func corner(x, y float64) string { return num(x) + " " + num(y) }

// serveCapabilities writes the service's capabilities document. The URLs in it carry the
// request's token parameter, if any, so that a client that found the capabilities with a
// token can follow them.
func (h *Handler) serveCapabilities(w http.ResponseWriter, r *http.Request, svc *catalog.Service) {
	c, err := h.contents(r, svc)
	if err != nil {
		h.wmtsFailed(w, r, err)
		return
	}
	base := h.serviceURL(svc)
	query, kvpSep := "", "?"
	if tok := r.URL.Query().Get("token"); tok != "" {
		query = "?token=" + url.QueryEscape(tok)
		kvpSep = query + "&"
	}
	var x xmlCapabilities
	x.NS, x.NSOWS, x.NSXlink = "http://www.opengis.net/wmts/1.0", "http://www.opengis.net/ows/1.1", "http://www.w3.org/1999/xlink"
	x.NSXSI = "http://www.w3.org/2001/XMLSchema-instance"
	x.SchemaLocation = "http://www.opengis.net/wmts/1.0 http://schemas.opengis.net/wmts/1.0/wmtsGetCapabilities_response.xsd"
	x.Version = "1.0.0"
	x.ServiceIdentification.Title = svc.Name
	x.ServiceIdentification.ServiceType = "OGC WMTS"
	x.ServiceIdentification.ServiceTypeVersion = "1.0.0"
	x.Operations = []xmlOperation{
		{Name: "GetCapabilities", Gets: []xmlGet{{Href: base + "/1.0.0/WMTSCapabilities.xml" + query, Encoding: "RESTful"}, {Href: base + kvpSep, Encoding: "KVP"}}},
		{Name: "GetTile", Gets: []xmlGet{{Href: base + "/tile/1.0.0/" + query, Encoding: "RESTful"}, {Href: base + kvpSep, Encoding: "KVP"}}},
	}
	for _, l := range c.Layers {
		xl := xmlLayer{Title: l.Title, Identifier: l.ID, Format: l.Format}
		if l.WGS84 != (orb.Bound{}) {
			xl.WGS84 = &xmlBBox{CRS: "urn:ogc:def:crs:OGC:2:84", Lower: corner(l.WGS84.Min[0], l.WGS84.Min[1]), Upper: corner(l.WGS84.Max[0], l.WGS84.Max[1])}
		}
		if l.Native != (orb.Bound{}) && len(c.Sets) > 0 {
			lo, hi := corner(l.Native.Min[0], l.Native.Min[1]), corner(l.Native.Max[0], l.Native.Max[1])
			if c.LatFirst {
				lo, hi = corner(l.Native.Min[1], l.Native.Min[0]), corner(l.Native.Max[1], l.Native.Max[0])
			}
			xl.BBox = &xmlBBox{CRS: c.Sets[0].CRS, Lower: lo, Upper: hi}
		}
		xl.Style.IsDefault, xl.Style.Title, xl.Style.Identifier = true, "Default Style", "default"
		for _, s := range c.Sets {
			xl.Links = append(xl.Links, xmlLink{Set: s.ID})
		}
		xl.ResourceURL.Format, xl.ResourceURL.ResourceType = l.Format, "tile"
		xl.ResourceURL.Template = base + "/tile/1.0.0/" + url.PathEscape(l.ID) + "/{Style}/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}" + query
		x.Contents.Layers = append(x.Contents.Layers, xl)
	}
	for _, s := range c.Sets {
		xs := xmlTileMatrixSet{Title: s.Title, Abstract: s.Abstract, Identifier: s.ID, SupportedCRS: s.CRS, WellKnownScaleSet: s.WellKnownScaleSet}
		for _, m := range s.Matrices {
			xs.Matrices = append(xs.Matrices, xmlTileMatrix{Identifier: m.ID, ScaleDenominator: num(m.ScaleDenominator),
				TopLeftCorner: corner(m.TopLeft[0], m.TopLeft[1]), TileWidth: m.TileWidth, TileHeight: m.TileHeight,
				MatrixWidth: m.MatrixWidth, MatrixHeight: m.MatrixHeight})
		}
		x.Contents.Sets = append(x.Contents.Sets, xs)
	}
	x.ServiceMetadataURL.Href = base + "/1.0.0/WMTSCapabilities.xml" + query
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", " ")
	if err := enc.Encode(x); err != nil {
		h.wmtsFailed(w, r, err)
		return
	}
	b.WriteByte('\n')
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}
