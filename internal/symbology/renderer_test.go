package symbology

import (
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// TestDraws is the table of which symbols draw which geometries: what ExportMapImage accepts
// in a request's renderer, and, for the simple symbols, what a service definition must use.
func TestDraws(t *testing.T) {
	all := []SymbolType{SimpleFill, SimpleLine, SimpleMarker, PictureFill, PictureMarker, CharacterMarker}
	want := map[feature.GeometryType][]SymbolType{
		feature.Polygon:    {SimpleFill, PictureFill},
		feature.Polyline:   {SimpleLine},
		feature.Point:      {SimpleMarker, PictureMarker, CharacterMarker},
		feature.Multipoint: {SimpleMarker, PictureMarker, CharacterMarker},
		feature.None:       all,
	}
	for gt, ok := range want {
		for _, st := range all {
			w := false
			for _, o := range ok {
				w = w || o == st
			}
			if got := st.Draws(gt); got != w {
				t.Errorf("%s.Draws(%s) = %v, want %v", st, gt.Name(), got, w)
			}
		}
		if s := SimpleSymbolType(gt); s != "" && !s.Draws(gt) {
			t.Errorf("SimpleSymbolType(%s) = %s, which cannot draw it", gt.Name(), s)
		}
	}
}
