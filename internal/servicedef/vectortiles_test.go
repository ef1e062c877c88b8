package servicedef_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// TestVectorTiles: a layer's vectorTiles choices (include, fields, minZoom) are read, defaulted
// from the layer (visible, display field) and checked against the published fields; the tile
// attributes add what the renderer and labels read, published fields only.
func TestVectorTiles(t *testing.T) {
	cfg, err := servicedef.Load(writeConfig(t, good), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Services[0].Maps[0].Layers[0]
	if !l.InVectorTiles() || l.VectorTiles.Include != nil || l.VectorTiles.Fields != nil || l.VectorTiles.MinZoom != 0 {
		t.Errorf("defaults: %+v", l.VectorTiles)
	}
	if got := l.TileFields(); !slices.Equal(got, []string{"ISO_N3"}) {
		t.Errorf("default tile fields %q, want the display field", got)
	}

	body := good + `            visible: false
            fields: [fid, NAME, ISO_N3]
            renderer:
              type: uniqueValue
              fields: [name]
              values: [{value: France, symbol: {type: simpleFill, color: [1, 2, 3]}}]
            labels: [{field: iso_n3}]
            vectorTiles: {fields: [fid], minZoom: 3}
`
	cfg, err = servicedef.Load(writeConfig(t, body), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	l = cfg.Services[0].Maps[0].Layers[0]
	if l.InVectorTiles() || l.VectorTiles.MinZoom != 3 {
		t.Errorf("set: %+v (a hidden layer is left out unless included)", l.VectorTiles)
	}
	if got := l.TileFields(); !slices.Equal(got, []string{"fid", "NAME", "ISO_N3"}) {
		t.Errorf("tile fields %q: want the listed one, then the renderer's and the label's", got)
	}

	// A renderer field that is not published does not go into tiles.
	body = good + `            fields: [fid, ISO_N3]
            renderer:
              type: uniqueValue
              fields: [NAME]
              values: [{value: France, symbol: {type: simpleFill, color: [1, 2, 3]}}]
            visible: false
            vectorTiles: {include: true}
`
	if cfg, err = servicedef.Load(writeConfig(t, body), providers.Registry()); err != nil {
		t.Fatal(err)
	}
	if l = cfg.Services[0].Maps[0].Layers[0]; !l.InVectorTiles() {
		t.Error("include: true did not include the layer")
	}
	if got := l.TileFields(); !slices.Equal(got, []string{"ISO_N3"}) {
		t.Errorf("tile fields %q: an unpublished renderer field went in", got)
	}

	bad := good + `            fields: [fid, ISO_N3]
            vectorTiles: {fields: [NAME, ISO_N3, iso_n3], minZoom: 30, zoom: 1}
`
	_, err = servicedef.Load(writeConfig(t, bad), providers.Registry())
	var ve *servicedef.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{
		`9:36: vectorTiles field "NAME" is not a published field of layer "Countries" (fields: fid, ISO_N3)`,
		`9:50: vectorTiles field "iso_n3" listed twice`,
		`9:68: vectorTiles.minZoom 30: want 0 to 24`,
		`9:72: unknown key "zoom" in vectorTiles`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
