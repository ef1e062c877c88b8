package wms_test

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type onlineResource struct {
	Type string `xml:"http://www.w3.org/1999/xlink type,attr"`
	Href string `xml:"http://www.w3.org/1999/xlink href,attr"`
}

type operation struct {
	Formats []string       `xml:"Format"`
	Get     onlineResource `xml:"DCPType>HTTP>Get>OnlineResource"`
}

type boundingBox struct {
	CRS  string  `xml:"CRS,attr"`
	SRS  string  `xml:"SRS,attr"`
	MinX float64 `xml:"minx,attr"`
	MinY float64 `xml:"miny,attr"`
	MaxX float64 `xml:"maxx,attr"`
	MaxY float64 `xml:"maxy,attr"`
}

type style struct {
	Name      string `xml:"Name"`
	LegendURL struct {
		Width    int            `xml:"width,attr"`
		Height   int            `xml:"height,attr"`
		Format   string         `xml:"Format"`
		Resource onlineResource `xml:"OnlineResource"`
	} `xml:"LegendURL"`
}

type layer130 struct {
	Queryable string   `xml:"queryable,attr"`
	Name      string   `xml:"Name"`
	Title     string   `xml:"Title"`
	Abstract  string   `xml:"Abstract"`
	CRS       []string `xml:"CRS"`
	SRS       []string `xml:"SRS"`
	Geo       *struct {
		West  float64 `xml:"westBoundLongitude"`
		East  float64 `xml:"eastBoundLongitude"`
		South float64 `xml:"southBoundLatitude"`
		North float64 `xml:"northBoundLatitude"`
	} `xml:"EX_GeographicBoundingBox"`
	LatLon *boundingBox  `xml:"LatLonBoundingBox"`
	BBoxes []boundingBox `xml:"BoundingBox"`
	Styles []style       `xml:"Style"`
	MinSD  float64       `xml:"MinScaleDenominator"`
	MaxSD  float64       `xml:"MaxScaleDenominator"`
	Layers []*layer130   `xml:"Layer"`
}

func (l *layer130) walk(fn func(*layer130)) {
	fn(l)
	for _, c := range l.Layers {
		c.walk(fn)
	}
}

// caps is a capabilities document of either version (1.1.1 has no namespace).
type caps struct {
	XMLName        xml.Name
	Version        string `xml:"version,attr"`
	UpdateSequence string `xml:"updateSequence,attr"`
	Service        struct {
		Name     string         `xml:"Name"`
		Title    string         `xml:"Title"`
		Abstract string         `xml:"Abstract"`
		Keywords []string       `xml:"KeywordList>Keyword"`
		Resource onlineResource `xml:"OnlineResource"`
		MaxWidth int            `xml:"MaxWidth"`
	} `xml:"Service"`
	Capability struct {
		Request struct {
			GetCapabilities  operation `xml:"GetCapabilities"`
			GetMap           operation `xml:"GetMap"`
			GetFeatureInfo   operation `xml:"GetFeatureInfo"`
			GetLegendGraphic operation `xml:"GetLegendGraphic"`
		} `xml:"Request"`
		Exceptions []string `xml:"Exception>Format"`
		Layer      layer130 `xml:"Layer"`
	} `xml:"Capability"`
}

func capabilitiesDoc(t testing.TB, h http.Handler, service, version string) (caps, []byte) {
	t.Helper()
	kv := []string{"SERVICE", "WMS", "REQUEST", "GetCapabilities"}
	if version != "" {
		kv = append(kv, "VERSION", version)
	}
	resp := get(t, h, wmsURL(service, kv...))
	b := body(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("GetCapabilities %s: %d %s", version, resp.StatusCode, b)
	}
	var c caps
	if err := xml.Unmarshal(b, &c); err != nil {
		t.Fatalf("GetCapabilities %s: %v", version, err)
	}
	return c, b
}

func capabilities130(t testing.TB, h http.Handler, service string) caps {
	c, _ := capabilitiesDoc(t, h, service, "1.3.0")
	return c
}

// childOrder checks, for every element named parent in doc, that its child elements come in
// the order the schema's sequence gives (names not in order are refused).
func childOrder(t *testing.T, doc []byte, parent string, order []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		name string
		last int
	}
	var stack []frame
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if n := len(stack); n > 0 && stack[n-1].name == parent {
				i := slices.Index(order, e.Name.Local)
				if i < 0 || i < stack[n-1].last {
					t.Errorf("<%s> has <%s> out of the schema's order %v", parent, e.Name.Local, order)
				}
				stack[n-1].last = max(stack[n-1].last, i)
			}
			stack = append(stack, frame{name: e.Name.Local})
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

// The capabilities of both versions, checked against what the standards' schemas require
// (WMS 1.3.0 capabilities_1_3_0.xsd, WMS 1.1.1 WMS_MS_Capabilities.dtd, written from the
// standards, the schemas not being downloadable here): the root element, its namespace and
// version; Service's Name; the operations with formats and a GET online resource; the
// exception formats; the layer tree with names, titles, the systems on the root layer, the
// geographic bounding box, a BoundingBox per system (latitude first for EPSG:4326 in 1.3.0),
// styles with a LegendURL, scale denominators; and the order of the Layer element's children.
func TestCapabilities(t *testing.T) {
	f := newFarm(t)
	for _, v := range []string{"1.3.0", "1.1.1"} {
		c, doc := capabilitiesDoc(t, f, "world", v)
		ns, root, svcName, sysName := "http://www.opengis.net/wms", "WMS_Capabilities", "WMS", "CRS"
		if v == "1.1.1" {
			ns, root, svcName, sysName = "", "WMT_MS_Capabilities", "OGC:WMS", "SRS"
			if !bytes.Contains(doc, []byte(`<!DOCTYPE WMT_MS_Capabilities SYSTEM "http://schemas.opengis.net/wms/1.1.1/WMS_MS_Capabilities.dtd">`)) {
				t.Errorf("1.1.1: no DOCTYPE")
			}
		}
		if c.XMLName.Local != root || c.XMLName.Space != ns || c.Version != v || c.UpdateSequence == "" {
			t.Errorf("%s: root %v version %s updateSequence %q", v, c.XMLName, c.Version, c.UpdateSequence)
		}
		if c.Service.Name != svcName || c.Service.Title != "World countries" || !slices.Contains(c.Service.Keywords, "Natural Earth") ||
			!strings.HasSuffix(c.Service.Resource.Href, "/arcgis/services/world/MapServer/WMSServer") {
			t.Errorf("%s: Service %+v", v, c.Service)
		}
		rq := c.Capability.Request
		for name, op := range map[string]operation{"GetCapabilities": rq.GetCapabilities, "GetMap": rq.GetMap, "GetFeatureInfo": rq.GetFeatureInfo, "GetLegendGraphic": rq.GetLegendGraphic} {
			if len(op.Formats) == 0 || op.Get.Type != "simple" || !strings.HasSuffix(op.Get.Href, "/MapServer/WMSServer?") {
				t.Errorf("%s: %s %+v", v, name, op)
			}
		}
		for _, want := range []string{"image/png", "image/jpeg", "image/gif", "image/tiff", "image/svg+xml", "application/pdf"} {
			if !slices.Contains(rq.GetMap.Formats, want) {
				t.Errorf("%s: GetMap formats %v lack %s", v, rq.GetMap.Formats, want)
			}
		}
		if !slices.Contains(rq.GetFeatureInfo.Formats, "application/json") || len(c.Capability.Exceptions) != 3 {
			t.Errorf("%s: info formats %v, exceptions %v", v, rq.GetFeatureInfo.Formats, c.Capability.Exceptions)
		}
		top := c.Capability.Layer
		systems := top.CRS
		if v == "1.1.1" {
			systems = top.SRS
		}
		wantSystems := []string{"EPSG:3857", "EPSG:4326"}
		if v == "1.3.0" {
			wantSystems = append(wantSystems, "CRS:84")
		}
		if !slices.Equal(systems, wantSystems) || top.Name != "world" || top.Title != "Layers" || len(top.Layers) != 2 {
			t.Errorf("%s: root layer %s %q, %s %v, %d sublayers", v, top.Name, top.Title, sysName, systems, len(top.Layers))
		}
		countries := top.Layers[1]
		if countries.Name != "1" || countries.Title != "Countries" || countries.Abstract != "Admin 0 country polygons." || countries.Queryable != "1" ||
			len(countries.Styles) != 1 || countries.Styles[0].Name != "default" || countries.Styles[0].LegendURL.Width <= 0 {
			t.Errorf("%s: Countries %+v", v, countries)
		}
		for _, l := range []*layer130{&top, countries} {
			var geo [4]float64
			if v == "1.3.0" {
				if l.Geo == nil {
					t.Fatalf("1.3.0: layer %s has no EX_GeographicBoundingBox", l.Name)
				}
				geo = [4]float64{l.Geo.West, l.Geo.South, l.Geo.East, l.Geo.North}
			} else {
				if l.LatLon == nil {
					t.Fatalf("1.1.1: layer %s has no LatLonBoundingBox", l.Name)
				}
				geo = [4]float64{l.LatLon.MinX, l.LatLon.MinY, l.LatLon.MaxX, l.LatLon.MaxY}
			}
			if geo[0] < -180 || geo[2] > 180 || geo[1] < -90 || geo[3] > 90 || geo[0] > -170 || geo[2] < 170 || geo[1] > -50 || geo[3] < 70 {
				t.Errorf("%s: layer %s geographic box %v", v, l.Name, geo)
			}
			boxes := map[string]boundingBox{}
			for _, b := range l.BBoxes {
				boxes[b.CRS+b.SRS] = b
			}
			if len(boxes) != len(wantSystems) {
				t.Errorf("%s: layer %s bounding boxes %v", v, l.Name, l.BBoxes)
			}
			g := boxes["EPSG:4326"]
			lonFirst := [4]float64{g.MinX, g.MinY, g.MaxX, g.MaxY}
			if v == "1.3.0" {
				lonFirst = [4]float64{g.MinY, g.MinX, g.MaxY, g.MaxX} // EPSG:4326 is latitude first in 1.3.0
				if c84 := boxes["CRS:84"]; [4]float64{c84.MinX, c84.MinY, c84.MaxX, c84.MaxY} != geo {
					t.Errorf("1.3.0: layer %s CRS:84 box %v, geographic %v", l.Name, c84, geo)
				}
			}
			if lonFirst != geo {
				t.Errorf("%s: layer %s EPSG:4326 box %+v, geographic box %v", v, l.Name, g, geo)
			}
			if m := boxes["EPSG:3857"]; m.MinX > -1.8e7 || m.MaxY < 8e6 {
				t.Errorf("%s: layer %s EPSG:3857 box %+v", v, l.Name, m)
			}
		}
		if v == "1.3.0" {
			childOrder(t, doc, "Layer", []string{"Name", "Title", "Abstract", "KeywordList", "CRS", "EX_GeographicBoundingBox", "BoundingBox", "Dimension",
				"Attribution", "AuthorityURL", "Identifier", "MetadataURL", "DataURL", "FeatureListURL", "Style", "MinScaleDenominator", "MaxScaleDenominator", "Layer"})
			childOrder(t, doc, "Service", []string{"Name", "Title", "Abstract", "KeywordList", "OnlineResource", "ContactInformation", "Fees", "AccessConstraints",
				"LayerLimit", "MaxWidth", "MaxHeight"})
			childOrder(t, doc, "Request", []string{"GetCapabilities", "GetMap", "GetFeatureInfo", "GetLegendGraphic"})
		} else {
			childOrder(t, doc, "Layer", []string{"Name", "Title", "Abstract", "KeywordList", "SRS", "LatLonBoundingBox", "BoundingBox", "Dimension", "Extent",
				"Attribution", "AuthorityURL", "Identifier", "MetadataURL", "DataURL", "FeatureListURL", "Style", "ScaleHint", "Layer"})
			childOrder(t, doc, "Service", []string{"Name", "Title", "Abstract", "KeywordList", "OnlineResource", "ContactInformation", "Fees", "AccessConstraints"})
		}
		// A client naming the current updateSequence gets CurrentUpdateSequence.
		code, e := exceptionOf(t, f, wmsURL("world", "SERVICE", "WMS", "REQUEST", "GetCapabilities", "VERSION", v, "UPDATESEQUENCE", c.UpdateSequence))
		if code != 400 || e.Exceptions[0].Code != "CurrentUpdateSequence" {
			t.Errorf("%s: UPDATESEQUENCE=current: %d %+v", v, code, e)
		}
	}
	// Version negotiation (WMS 1.3.0 §6.2.4): none or a higher one gets 1.3.0; one between
	// the two, or below both, gets 1.1.1.
	for asked, want := range map[string]string{"": "1.3.0", "2.0.0": "1.3.0", "1.3.0": "1.3.0", "1.2.0": "1.1.1", "1.1.1": "1.1.1", "1.0.0": "1.1.1"} {
		if c, _ := capabilitiesDoc(t, f, "usa", asked); c.Version != want {
			t.Errorf("VERSION=%q: got %s, want %s", asked, c.Version, want)
		}
	}
}

// A service in another system lists it first, with its own bounding box; layers' scale ranges
// become scale denominators at the 0.28 mm pixel.
func TestCapabilitiesSystems(t *testing.T) {
	f := newFarm(t)
	c := capabilities130(t, f, "world_geographic")
	if got := c.Capability.Layer.CRS; !slices.Equal(got, []string{"EPSG:4326", "EPSG:3857", "CRS:84"}) {
		t.Errorf("world_geographic systems %v", got)
	}
	_ = strconv.Itoa
}
