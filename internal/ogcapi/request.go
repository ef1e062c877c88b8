package ogcapi

import (
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// Media types the APIs answer in.
const (
	mediaJSON    = "application/json"
	mediaGeoJSON = "application/geo+json"
	mediaHTML    = "text/html"
	mediaOpenAPI = "application/vnd.oai.openapi+json;version=3.0"
	mediaPNG     = "image/png"
	mediaJPEG    = "image/jpeg"
)

// fValues are the values of the f parameter and the media types they ask for.
var fValues = map[string]string{
	"json": mediaJSON, "geojson": mediaGeoJSON, "html": mediaHTML,
	"png": mediaPNG, "jpg": mediaJPEG, "jpeg": mediaJPEG,
}

// params reads a request's query string: every parameter once (a name given twice with two
// values is refused, whichever a reader took would be a choice), and, when known is set, only
// the parameters it knows (an unknown one is a 400, as Features Part 1 §7.15.1 requires of the
// parameters its API definition does not name). "token" is always known: the api's policy reads
// it.
func params(r *http.Request, known func(name string) bool) (map[string]string, error) {
	q := r.URL.Query()
	out := make(map[string]string, len(q))
	for name, vs := range q {
		for _, v := range vs[1:] {
			if v != vs[0] {
				return nil, invalid(name, "given more than once with different values")
			}
		}
		if name != "token" && known != nil && !known(name) {
			return nil, &Error{Status: http.StatusBadRequest, Code: "InvalidParameterValue", Description: "unknown parameter " + quoted(name)}
		}
		out[name] = vs[0]
	}
	return out, nil
}

// answerType is the media type, among offered, of the answer to a request whose query string
// holds no parameters but f and those the resource ignores: params with no list of known names,
// then negotiate.
func answerType(r *http.Request, offered ...string) (string, error) {
	p, err := params(r, nil)
	if err != nil {
		return "", err
	}
	return negotiate(r, p, offered...)
}

// negotiate picks the media type of the answer among offered (the first is the default): the f
// parameter when given (one of offered, else 400), else the Accept header's most preferred
// (RFC 9110 §12.5.1: its q values, then the order of offered), else the default.
func negotiate(r *http.Request, p map[string]string, offered ...string) (string, error) {
	if f, ok := p["f"]; ok {
		mt := fValues[strings.ToLower(f)]
		if !slices.Contains(offered, mt) {
			names := make([]string, 0, len(offered))
			for k, v := range fValues {
				if slices.Contains(offered, v) {
					names = append(names, k)
				}
			}
			slices.Sort(names)
			return "", invalid("f", quoted(f)+" is not offered here: "+strings.Join(names, ", "))
		}
		return mt, nil
	}
	accept := r.Header.Get("Accept")
	if accept == "" {
		return offered[0], nil
	}
	best, bestQ := offered[0], 0.0
	for i, o := range offered {
		q := acceptQ(accept, o)
		if q > bestQ || i == 0 && q == bestQ {
			best, bestQ = o, q
		}
	}
	return best, nil
}

// acceptQ is the quality the Accept header gives media type mt: that of its most specific
// matching range (type/subtype, type/*, */*), 0 when none matches.
func acceptQ(accept, mt string) float64 {
	mtType, _, _ := strings.Cut(mt, "/")
	mt, _, _ = strings.Cut(mt, ";")
	q, spec := 0.0, -1
	for _, part := range strings.Split(accept, ",") {
		rng, ps, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		s := -1
		switch {
		case rng == mt:
			s = 2
		case rng == mtType+"/*":
			s = 1
		case rng == "*/*":
			s = 0
		}
		if s <= spec {
			continue
		}
		v := 1.0
		if qs, ok := ps["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil && f >= 0 && f <= 1 {
				v = f
			}
		}
		q, spec = v, s
	}
	return q
}

// intParam reads an integer parameter between lo and hi; def when absent.
func intParam(p map[string]string, name string, def, lo, hi int) (int, error) {
	s, ok := p[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < lo || n > hi {
		return 0, invalid(name, "must be a whole number from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+", not "+quoted(s))
	}
	return n, nil
}

// readBBoxCRS reads bbox (nil when absent) and, with it, bbox-crs (CRS84 by default): the box
// is returned x first, a latitude-first box of a north-first system swapped.
func (s *service) readBBoxCRS(p map[string]string) ([]float64, crsRef, error) {
	bbox, err := readBBox(p)
	if err != nil || bbox == nil {
		return nil, crsRef{}, err
	}
	bc, err := s.readCRS(p, "bbox-crs", s.defaultCRS())
	if err != nil {
		return nil, crsRef{}, err
	}
	if bc.northFirst {
		bbox = []float64{bbox[1], bbox[0], bbox[3], bbox[2]}
	}
	return bbox, bc, nil
}

// readBBox reads a bbox parameter: four numbers (or six, the heights ignored), lower corner
// then upper corner in the axis order of its CRS; nil when absent.
func readBBox(p map[string]string) ([]float64, error) {
	s, ok := p["bbox"]
	if !ok {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 && len(parts) != 6 {
		return nil, invalid("bbox", "must be four numbers (or six, with heights), not "+quoted(s))
	}
	v := make([]float64, len(parts))
	for i, part := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalid("bbox", "must be four numbers (or six, with heights), not "+quoted(s))
		}
		v[i] = f
	}
	if len(v) == 6 {
		v = []float64{v[0], v[1], v[3], v[4]}
	}
	return v, nil
}

// crsRef is a coordinate reference system a client may name, as the APIs list it.
type crsRef struct {
	uri string
	sr  proj.SR
	// northFirst says coordinates in it are latitude or northing first (EPSG's axis order of
	// the system; CRS84 is longitude first).
	northFirst bool
}

// crs84 is OGC's longitude-latitude WGS 84, the default of GeoJSON and of every bbox.
const crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

func epsgURI(code int) string { return "http://www.opengis.net/def/crs/EPSG/0/" + strconv.Itoa(code) }

// systems are the coordinate reference systems of the service's collections: CRS84 first, then
// EPSG:4326, EPSG:3857 and the map's own, those the projection engine of the build knows (the
// built-in one knows WGS 84 and Web Mercator, PROJ every EPSG system), as WMS lists them.
func (s *service) systems() []crsRef {
	m := s.svc.DefaultMap()
	out := []crsRef{{uri: crs84, sr: proj.SR{WKID: proj.WGS84}}}
	add := func(code int) {
		uri := epsgURI(code)
		for _, c := range out {
			if c.uri == uri {
				return
			}
		}
		sr := proj.SR{WKID: code}
		c, err := m.Systems.CRS(sr)
		if err != nil {
			return
		}
		out = append(out, crsRef{uri: uri, sr: sr, northFirst: c.NorthFirst})
	}
	add(proj.WGS84)
	add(proj.WebMercator)
	if own := m.SR.LatestWKID(); own != 0 {
		add(own)
	}
	return out
}

// storageCRS is the URI of the map's own system ("" when it has no EPSG code).
func (s *service) storageCRS() string {
	if own := s.svc.DefaultMap().SR.LatestWKID(); own != 0 {
		return epsgURI(own)
	}
	return ""
}

// readCRS reads the parameter name (crs, bbox-crs), which must name one of the service's
// systems: by its URI (http or https), or as a safe CURIE ([EPSG:3857], [OGC:CRS84]); def when
// absent.
func (s *service) readCRS(p map[string]string, name string, def crsRef) (crsRef, error) {
	v, ok := p[name]
	if !ok {
		return def, nil
	}
	want := normalCRS(v)
	for _, c := range s.systems() {
		if c.uri == want {
			return c, nil
		}
	}
	var uris []string
	for _, c := range s.systems() {
		uris = append(uris, c.uri)
	}
	return crsRef{}, invalid(name, quoted(v)+" is not offered: "+strings.Join(uris, ", "))
}

// normalCRS turns the spellings of a CRS a client may send into the URI the APIs list.
func normalCRS(v string) string {
	v = strings.TrimSpace(v)
	if c, ok := strings.CutPrefix(v, "https://"); ok {
		v = "http://" + c
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	switch up := strings.ToUpper(v); {
	case up == "OGC:CRS84" || up == "CRS84":
		return crs84
	case strings.HasPrefix(up, "EPSG:"):
		if n, err := strconv.Atoi(v[5:]); err == nil {
			return epsgURI(n)
		}
	}
	return v
}

// defaultCRS is CRS84.
func (s *service) defaultCRS() crsRef { return s.systems()[0] }

// pageURL is u with the query parameters p, sorted, and those of set replacing theirs. A token
// the client sent in the query string stays in: a client that pages by following next links
// (GDAL) sends nothing else.
func pageURL(u string, p map[string]string, set map[string]string) string {
	q := url.Values{}
	for k, v := range p {
		q.Set(k, v)
	}
	for k, v := range set {
		q.Set(k, v)
	}
	if len(q) == 0 {
		return u
	}
	return u + "?" + q.Encode()
}
