package queries_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// usaView is the usa map's default description drawn at 800×600.
func usaView(t *testing.T, f *mapservertest.Fixture) (*gisxml.MapDescription, *gisxml.ImageDisplay) {
	t.Helper()
	info := mapservertest.Must[gisxml.GetServerInfoResponse](f, "usa", "GetServerInfo", &gisxml.GetServerInfo{}).Result
	return info.DefaultMapDescription, &gisxml.ImageDisplay{ImageWidth: 800, ImageHeight: 600, ImageDPI: 96}
}

func TestFind(t *testing.T) {
	f := mapservertest.New(t)
	md, disp := usaView(t, f)
	tests := []struct {
		name     string
		req      gisxml.Find
		want     int
		firstVal string
	}{
		{"exact name", gisxml.Find{SearchString: "San Benito", SearchFields: "NAME", FindOption: gisxml.FindAllLayers}, 1, "San Benito"},
		{"exact is case-sensitive", gisxml.Find{SearchString: "san benito", SearchFields: "NAME", FindOption: gisxml.FindAllLayers}, 0, ""},
		{"contains is case-insensitive", gisxml.Find{SearchString: "san benito", Contains: true, SearchFields: "NAME", FindOption: gisxml.FindAllLayers}, 1, "San Benito"},
		{"Utah: state, county and state facts", gisxml.Find{SearchString: "Utah", SearchFields: "NAME", FindOption: gisxml.FindAllLayers}, 3, "Utah"},
		{"visible layers skip the hidden state facts", gisxml.Find{SearchString: "Utah", SearchFields: "NAME", FindOption: gisxml.FindVisibleLayers}, 2, "Utah"},
		{"only the states layer", gisxml.Find{SearchString: "Utah", SearchFields: "NAME", FindOption: gisxml.FindAllLayers, LayerIDs: gisxml.ArrayOfInt{0}}, 1, "Utah"},
		{"every field: a FIPS code", gisxml.Find{SearchString: "06037", FindOption: gisxml.FindAllLayers}, 1, "06037"},
		{"capped at MaxRecordCount", gisxml.Find{SearchString: "a", Contains: true, FindOption: gisxml.FindAllLayers}, 1000, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.MapDescription, req.MapImageDisplay = md, disp
			res := mapservertest.Must[gisxml.FindResponse](f, "usa", "Find", &req).Result
			if len(res) != tc.want {
				t.Fatalf("%d results, want %d", len(res), tc.want)
			}
			if tc.firstVal != "" && res[0].Value != tc.firstVal {
				t.Errorf("first result value %q, want %q", res[0].Value, tc.firstVal)
			}
			for _, r := range res {
				// Falls Church (fid 630) has no geometry in the sample data, so no shape.
				if r.Properties == nil || r.Shape == nil && r.FeatureID != 630 {
					t.Fatalf("result %+v has no shape or properties", r)
				}
			}
		})
	}
	f.ClientFault("usa", "Find", &gisxml.Find{MapDescription: md, MapImageDisplay: disp, SearchString: ""})
}

func TestIdentify(t *testing.T) {
	f := mapservertest.New(t)
	md, disp := usaView(t, f)
	tests := []struct {
		name   string
		shape  gisxml.GeometryKind
		tol    int
		opt    gisxml.IdentifyOption
		layers gisxml.ArrayOfInt
		want   []string // "layer:name" of each result
		popup  bool
	}{
		{"all layers, hidden ones too", &gisxml.PointN{X: laX, Y: laY}, 2, gisxml.IdentifyAllLayers, nil, []string{"States:California", "Counties:Los Angeles", "State facts:California"}, false},
		{"visible layers", &gisxml.PointN{X: laX, Y: laY}, 2, gisxml.IdentifyVisibleLayers, nil, []string{"States:California", "Counties:Los Angeles"}, false},
		{"topmost", &gisxml.PointN{X: laX, Y: laY}, 2, gisxml.IdentifyTopmost, nil, []string{"States:California"}, false},
		{"topmost of the listed layers", &gisxml.PointN{X: laX, Y: laY}, 2, gisxml.IdentifyTopmost, gisxml.ArrayOfInt{1}, []string{"Counties:Los Angeles"}, false},
		{"top one with popup", &gisxml.PointN{X: laX, Y: laY}, 2, gisxml.IdentifyTopOneWithHTMLPopup, nil, []string{"States:California"}, true},
		{"visible with popup", &gisxml.PointN{X: laX, Y: laY}, 0, gisxml.IdentifyVisibleWithHTMLPopup, nil, []string{"States:California", "Counties:Los Angeles"}, true},
		// Just off the coast: 20 pixels at this view (about 160 km) reach the shore, 0 pixels do not.
		{"tolerance reaches the shore", &gisxml.PointN{X: -13300000, Y: 3900000}, 20, gisxml.IdentifyAllLayers, gisxml.ArrayOfInt{0}, []string{"States:California"}, false},
		{"no tolerance at sea", &gisxml.PointN{X: -13300000, Y: 3900000}, 0, gisxml.IdentifyAllLayers, gisxml.ArrayOfInt{0}, nil, false},
		{"envelope search shape", &gisxml.EnvelopeN{XMin: laX - 1000, YMin: laY - 1000, XMax: laX + 1000, YMax: laY + 1000}, 0, gisxml.IdentifyAllLayers, gisxml.ArrayOfInt{1}, []string{"Counties:Los Angeles"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mapservertest.Must[gisxml.IdentifyResponse](f, "usa", "Identify", &gisxml.Identify{MapDescription: md, MapImageDisplay: disp,
				SearchShape: tc.shape, Tolerance: tc.tol, IdentifyOption: tc.opt, LayerIDs: tc.layers}).Result
			var got []string
			for _, r := range res {
				name := ""
				for _, p := range r.Properties.PropertyArray {
					if p.Key == "County" || p.Key == "State" && name == "" {
						name = p.Value.(string)
					}
				}
				got = append(got, r.Name+":"+name)
				if tc.popup != (r.HTMLPopup != nil) {
					t.Errorf("HTMLPopup %v, want popup %v", r.HTMLPopup, tc.popup)
				}
				if r.HTMLPopup != nil && !strings.Contains(*r.HTMLPopup, name) {
					t.Errorf("popup %q does not show %q", *r.HTMLPopup, name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("identified %v, want %v", got, tc.want)
			}
		})
	}
	// A layer hidden in the map description is skipped by the visible options.
	hidden := *md
	hidden.LayerDescriptions = slices.Clone(md.LayerDescriptions)
	ld := *hidden.LayerDescriptions[0]
	ld.Visible = false
	hidden.LayerDescriptions[0] = &ld
	res := mapservertest.Must[gisxml.IdentifyResponse](f, "usa", "Identify", &gisxml.Identify{MapDescription: &hidden, MapImageDisplay: disp,
		SearchShape: &gisxml.PointN{X: laX, Y: laY}, Tolerance: 1, IdentifyOption: gisxml.IdentifyTopmost}).Result
	if len(res) != 1 || res[0].LayerID != 1 {
		t.Errorf("with states hidden, topmost gave %d results (first layer %v), want the county", len(res), res)
	}
	f.ClientFault("usa", "Identify", &gisxml.Identify{MapDescription: md, MapImageDisplay: disp, SearchShape: &gisxml.PointN{X: laX, Y: laY}, IdentifyOption: "gisIdentifyEverything"})
}

func TestLayerResultOptions(t *testing.T) {
	f := mapservertest.New(t)
	md, disp := usaView(t, f)
	opts := *md
	opts.LayerDescriptions = slices.Clone(md.LayerDescriptions)
	ld := *opts.LayerDescriptions[1]
	ld.LayerResultOptions = &gisxml.LayerResultOptions{IncludeGeometry: operation.Ptr(false), ReturnFieldNamesInResults: operation.Ptr(true)}
	opts.LayerDescriptions[1] = &ld
	res := mapservertest.Must[gisxml.IdentifyResponse](f, "usa", "Identify", &gisxml.Identify{MapDescription: &opts, MapImageDisplay: disp,
		SearchShape: &gisxml.PointN{X: laX, Y: laY}, IdentifyOption: gisxml.IdentifyVisibleLayers}).Result
	if len(res) != 2 || res[0].Shape == nil || res[1].Shape != nil {
		t.Fatalf("identify: %d results; the state should keep its shape, the county lose it", len(res))
	}
	var keys []string
	for _, p := range res[1].Properties.PropertyArray {
		keys = append(keys, p.Key)
	}
	if !slices.Equal(keys, []string{"fid", "GEOID", "NAME", "STATE", "STATEFP", "Shape"}) {
		t.Errorf("county property keys %v, want field names", keys)
	}
	found := mapservertest.Must[gisxml.FindResponse](f, "usa", "Find", &gisxml.Find{MapDescription: &opts, MapImageDisplay: disp, SearchString: "06037",
		SearchFields: "GEOID", FindOption: gisxml.FindVisibleLayers}).Result
	if len(found) != 1 || found[0].Shape != nil || found[0].Properties.PropertyArray[2].Key != "NAME" {
		t.Errorf("find with options: %+v", found)
	}
}
