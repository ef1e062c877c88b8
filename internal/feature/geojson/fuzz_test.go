package geojson_test

import (
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// FuzzParse feeds arbitrary bytes to the GeoJSON reader: it returns a layer or an error, never
// panics, and a layer it returns holds only features whose geometry bounds are finite.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"type":"FeatureCollection","features":[{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"a","n":3}}]}`,
		`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]},"properties":{"v":1.5,"b":true,"x":null}}]}`,
		`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[]]},"properties":{}}]}`,
		`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"s":"x"}},{"type":"Feature","geometry":{"type":"GeometryCollection","geometries":[]}}]}`,
		`{"type":"Feature"}`,
		`[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := geojson.Parse("fuzz", data)
		if err != nil {
			return
		}
		layer, err := file.ReadLayer(proj.SR{WKID: proj.WGS84})
		if err != nil {
			return
		}
		_ = file.ReadAttributes()
		e := layer.Info().Extent
		if !e.IsEmpty() && (e.Min[0] != e.Min[0] || e.Max[1] != e.Max[1]) {
			t.Fatalf("extent with NaN: %v", e)
		}
	})
}
