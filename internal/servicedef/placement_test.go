package servicedef_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/symbology"

	"github.com/mapfarm/mapfarm/internal/servicedef"
)

func TestLabelPlacementKeys(t *testing.T) {
	cfg, err := loadCountryLabels(t, `              - field: NAME
                placement:
                  point: [above-right, center]
                  offset: 3
                  line: below
                  along: end
                  orientation: straight
                  repeat: 150
                  parts: all
                  polygon: straight
                  outside: true
                  duplicates: remove
              - field: NAME
                placement: {point: best, line: on, along: middle, orientation: curved, parts: longest, polygon: horizontal, duplicates: keep}
              - field: NAME
`)
	if err != nil {
		t.Fatal(err)
	}
	labels := cfg.Services[0].Maps[0].Layers[0].Labels
	want := symbology.LabelPlacement{
		Points: []symbology.PointPosition{symbology.PointAboveRight, symbology.PointCenter}, Offset: 3,
		Line: symbology.LineBelow, Along: symbology.LineEnd, Orientation: symbology.LineStraight, Repeat: 150,
		AllParts: true, PolygonStraight: true, Outside: true, RemoveDuplicates: true,
	}
	if !reflect.DeepEqual(labels[0].Placement, want) {
		t.Errorf("placement %+v, want %+v", labels[0].Placement, want)
	}
	// The defaults, spelt out or left out, are the zero value.
	for i := 1; i < 3; i++ {
		if !reflect.DeepEqual(labels[i].Placement, symbology.LabelPlacement{}) {
			t.Errorf("label %d placement %+v, want the zero value", i, labels[i].Placement)
		}
	}
	_, err = loadCountryLabels(t, `              - field: NAME
                placement: {point: [upstairs], line: beside, repeat: -1, wobble: 1}
`)
	for _, w := range []string{`point position "upstairs"`, `line placement "beside"`, "repeat", `unknown key "wobble"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v, want one about %s", err, w)
		}
	}
}

// loadCountryLabels loads a configuration of one map whose one layer, the sample countries, has
// the label classes labels (YAML list items, indented as under the layer's "labels:").
func loadCountryLabels(t *testing.T, labels string) (*servicedef.Config, error) {
	t.Helper()
	return servicedef.Load(writeConfig(t, `services:
  - name: p
    maps:
      - spatialReference: 3857
        layers:
          - name: Countries
            source: {geopackage: SAMPLE/world_countries_50m_4326.gpkg, table: countries}
            labels:
`+labels), providers.Registry())
}
