package proj

import (
	"math"
	"strings"
)

// FromWKT reads a spatial reference a client gives as well-known text. A WKT of WGS 84 or of
// Web Mercator, in any of the spellings clients send (Esri WKT1, OGC WKT1 as GDAL writes it,
// WKT2 2015 and 2019, simplified or not), is recognised by its parameters and comes back as
// the WKID of the system (4326; 3857, or 102100, 102113, 900913 when the text says so), which
// both engines draw with the same Go code. Any other WKT comes back as it is (SR.Text), for
// the engine to read. Text that is not a WKT is an error wrapping ErrInvalid.
func FromWKT(text string) (SR, error) {
	text = strings.TrimSpace(text)
	n, err := parseWKT(text)
	if err != nil {
		return SR{}, err
	}
	if wkid := builtinWKID(n); wkid != 0 {
		return SR{WKID: wkid}, nil
	}
	return SR{Text: text}, nil
}

// builtinWKID is the WKID of the built-in system a parsed WKT defines, or 0 when it defines
// another one (or one this reading is not sure of: a system whose authority code contradicts
// its parameters is left to the engine).
func builtinWKID(n *wktNode) int {
	switch {
	case n.is("GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS"):
		if code, ok := rootCode(n); ok && code != WGS84 && code != 0 {
			return 0
		}
		if isWGS84Geographic(n) {
			return WGS84
		}
	case n.is("PROJCS", "PROJCRS", "PROJECTEDCRS"):
		return webMercatorWKID(n)
	}
	return 0
}

// rootCode is the EPSG or Esri code a system's WKT gives itself; ok is false for another
// authority (whose codes mean nothing here) or none.
func rootCode(n *wktNode) (int, bool) {
	auth, code := n.id()
	if auth != "EPSG" && auth != "ESRI" {
		return 0, false
	}
	return code, true
}

// degree is one degree in radians, the factor WKT gives angular units.
const degree = math.Pi / 180

func near(x, want float64) bool { return math.Abs(x-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// isWGS84Geographic reports whether a geographic system's WKT is WGS 84 in degrees: the
// WGS 84 ellipsoid (6378137 m, 1/f 298.257223563), no datum shift, Greenwich, two axes in
// degrees. Axis order is not looked at: mapfarm's coordinates are longitude, latitude.
func isWGS84Geographic(g *wktNode) bool {
	a, rf, ok := ellipsoid(g)
	if !ok || !near(a, EarthRadius) || !near(rf, 298.257223563) {
		return false
	}
	if !greenwich(g) || !twoAxes(g, "ellipsoidal") {
		return false
	}
	units := 0
	for _, u := range unitsOf(g, "UNIT", "ANGLEUNIT") {
		if f, ok := u.num(1); !ok || !near(f, degree) {
			return false
		}
		units++
	}
	return units > 0
}

// ellipsoid returns the semi-major axis (metres) and inverse flattening (0 for a sphere) of a
// geographic system's datum; ok is false when the WKT gives none, a datum shift to WGS 84
// that is not zero (TOWGS84), or a datum whose EPSG code is neither WGS 84's (6326) nor the
// Web Mercator sphere's (6055).
func ellipsoid(g *wktNode) (a, rf float64, ok bool) {
	d := g.child("DATUM", "GEODETICDATUM", "TRF", "GEODETICREFERENCEFRAME", "ENSEMBLE")
	if d == nil {
		return 0, 0, false
	}
	if auth, code := d.id(); auth == "EPSG" && code != 6326 && code != 6055 {
		return 0, 0, false
	}
	if t := d.child("TOWGS84"); t != nil {
		for i := range t.values {
			if f, ok := t.num(i); !ok || f != 0 {
				return 0, 0, false
			}
		}
	}
	e := d.child("SPHEROID", "ELLIPSOID")
	if e == nil {
		return 0, 0, false
	}
	a, ok1 := e.num(1)
	rf, ok2 := e.num(2)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	if u := e.child("LENGTHUNIT", "UNIT"); u != nil {
		f, ok := u.num(1)
		if !ok {
			return 0, 0, false
		}
		a *= f
	}
	return a, rf, true
}

// greenwich reports whether the prime meridian is Greenwich's (WKT2 may leave it out).
func greenwich(g *wktNode) bool {
	pm := g.child("PRIMEM", "PRIMEMERIDIAN")
	if pm == nil {
		return !g.is("GEOGCS")
	}
	lon, ok := pm.num(1)
	return ok && lon == 0
}

// twoAxes reports whether the system has two axes: its CS (WKT2) is of kind and dimension 2,
// and it lists at most two AXIS elements.
func twoAxes(n *wktNode, kind string) bool {
	if cs := n.child("CS"); cs != nil {
		if !strings.EqualFold(cs.word(0), kind) {
			return false
		}
		if dim, ok := cs.num(1); !ok || dim != 2 {
			return false
		}
	}
	return len(n.children("AXIS")) <= 2
}

// unitsOf returns the unit elements with keywords of a system itself and of its axes.
func unitsOf(n *wktNode, keywords ...string) []*wktNode {
	units := n.children(keywords...)
	for _, ax := range n.children("AXIS") {
		units = append(units, ax.children(keywords...)...)
	}
	return units
}

// webMercatorWKIDs are the codes of Web Mercator a WKT may carry, and the WKID each stands for.
var webMercatorWKIDs = map[int]int{
	WebMercator: WebMercator, EsriWebMercator: EsriWebMercator, EsriWebMercatorOld: EsriWebMercatorOld,
	GoogleMercator: GoogleMercator, 3785: WebMercator, // 3785: EPSG's deprecated "Popular Visualisation CRS / Mercator"
}

// webMercatorWKID is the WKID of Web Mercator when a projected system's WKT defines it, else
// 0. Web Mercator is the Mercator projection of WGS 84 longitudes and latitudes as if on a
// sphere of WGS 84's semi-major axis, at true scale on the equator, centred on Greenwich,
// without false easting or northing, in metres. WKTs say so in three ways:
//
//   - a method that is Web Mercator by definition: Esri's Mercator_Auxiliary_Sphere (with
//     Auxiliary_Sphere_Type 0, the semi-major axis), EPSG's Popular Visualisation Pseudo
//     Mercator (WKT2);
//   - plain Mercator on the sphere of radius 6378137 (Esri's 102113, EPSG's 3785);
//   - plain Mercator (Mercator_1SP) on the WGS 84 ellipsoid, which OGC WKT1 cannot tell from
//     the ellipsoidal World Mercator but by what comes with it, as PROJ reads it: a Web
//     Mercator code in AUTHORITY, a spherical PROJ4 EXTENSION (GDAL writes both), or a name
//     saying so ("WGS 84 / Pseudo-Mercator", as GDAL's simple WKT1 has nothing else).
func webMercatorWKID(n *wktNode) int {
	code, hasCode := rootCode(n)
	wkid, named := webMercatorWKIDs[code]
	if hasCode && code != 0 && !named {
		return 0 // another system's code: let the engine judge
	}
	base := n.child("GEOGCS", "BASEGEOGCRS", "BASEGEODCRS", "BASEGEOGRAPHICCRS", "GEOGCRS")
	if base == nil || !greenwich(base) {
		return 0
	}
	a, rf, ok := ellipsoid(base)
	if !ok || !near(a, EarthRadius) {
		return 0
	}
	sphere, wgs84 := rf == 0, near(rf, 298.257223563)
	if !sphere && !wgs84 {
		return 0
	}
	params, method := n.children("PARAMETER"), n.child("PROJECTION")
	if conv := n.child("CONVERSION", "DERIVINGCONVERSION"); conv != nil {
		params, method = conv.children("PARAMETER"), conv.child("METHOD", "PROJECTION")
	}
	if method == nil || !zeroMercatorParameters(params) || !metres(n) {
		return 0
	}
	unnamed := WebMercator
	switch m := alnum(method.name()); m {
	case "mercatorauxiliarysphere":
		unnamed = EsriWebMercator
	case "popularvisualisationpseudomercator", "popularvisualizationpseudomercator":
	case "mercator", "mercator1sp", "mercator1spspherical", "mercatorspherical", "mercatorvarianta", "mercator2sp", "mercatorvariantb":
		if !sphere && !named && !sphericalExtension(n) && !pseudoMercatorName(n.name()) {
			return 0 // the ellipsoidal Mercator (World Mercator, 3395)
		}
		if m == "mercator" && sphere {
			unnamed = EsriWebMercatorOld // Esri's name of the method, on its sphere: 102113
		}
	default:
		return 0
	}
	if named {
		return wkid
	}
	return unnamed
}

// zeroMercatorParameters reports whether every parameter is one Mercator has, with Web
// Mercator's value: 0 for origins, false easting and northing, standard parallel and
// auxiliary sphere type, 1 for the scale factor. An unknown parameter is not Web Mercator.
func zeroMercatorParameters(params []*wktNode) bool {
	for _, p := range params {
		v, ok := p.num(1)
		if !ok {
			return false
		}
		switch alnum(p.name()) {
		case "falseeasting", "falsenorthing", "centralmeridian", "longitudeofnaturalorigin", "longitudeoforigin",
			"longitudeofcenter", "standardparallel1", "latitudeofnaturalorigin", "latitudeoforigin",
			"latitudeof1ststandardparallel", "latitudeoffirststandardparallel", "latitudeofcenter", "auxiliaryspheretype":
			if v != 0 {
				return false
			}
		case "scalefactor", "scalefactoratnaturalorigin":
			if v != 1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// metres reports whether a projected system's linear unit is the metre, on two Cartesian axes.
func metres(n *wktNode) bool {
	if !twoAxes(n, "Cartesian") {
		return false
	}
	units := 0
	for _, u := range unitsOf(n, "UNIT", "LENGTHUNIT") {
		if f, ok := u.num(1); !ok || f != 1 {
			return false
		}
		units++
	}
	return units > 0
}

// sphericalExtension reports whether the WKT1 carries a PROJ4 EXTENSION of spherical Mercator
// on a sphere of radius 6378137, as GDAL writes for EPSG:3857.
func sphericalExtension(n *wktNode) bool {
	for _, e := range n.children("EXTENSION") {
		if !strings.EqualFold(e.name(), "PROJ4") || len(e.values) < 2 || e.values[1].kind != wktString {
			continue
		}
		args := map[string]string{}
		for _, f := range strings.Fields(e.values[1].text) {
			k, v, _ := strings.Cut(strings.TrimPrefix(f, "+"), "=")
			args[k] = v
		}
		if args["proj"] == "webmerc" || args["proj"] == "merc" && args["a"] == "6378137" && args["b"] == "6378137" {
			return true
		}
	}
	return false
}

// pseudoMercatorName reports whether a system's name calls it Web Mercator ("WGS 84 /
// Pseudo-Mercator", "WGS_1984_Web_Mercator", "Google Maps Global Mercator"): what tells a
// simple OGC WKT1 of 3857 from World Mercator.
func pseudoMercatorName(name string) bool {
	n := alnum(name)
	return strings.Contains(n, "pseudomercator") || strings.Contains(n, "webmercator") || strings.Contains(n, "googlemapsglobalmercator")
}

// alnum is s in lower case with only its letters and digits: how WKT names are compared
// ("Mercator_(1SP)_(Spherical)", "Mercator (1SP) (Spherical)").
func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
