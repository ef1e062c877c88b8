package servicedef_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// TestReferenceScale: a map's referenceScale (default 0) and a layer's scaleSymbols (default
// true) are read and checked.
func TestReferenceScale(t *testing.T) {
	cfg, err := servicedef.Load(writeConfig(t, good), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Services[0].Maps[0]; m.ReferenceScale != 0 || !m.Layers[0].ScaleSymbols {
		t.Errorf("defaults: referenceScale %v, scaleSymbols %v", m.ReferenceScale, m.Layers[0].ScaleSymbols)
	}
	body := strings.Replace(good, "      - spatialReference: 3857\n", "      - spatialReference: 3857\n        referenceScale: 5000000\n", 1) +
		"            scaleSymbols: false\n"
	cfg, err = servicedef.Load(writeConfig(t, body), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Services[0].Maps[0]; m.ReferenceScale != 5e6 || m.Layers[0].ScaleSymbols {
		t.Errorf("set: referenceScale %v, scaleSymbols %v", m.ReferenceScale, m.Layers[0].ScaleSymbols)
	}
	bad := strings.Replace(good, "      - spatialReference: 3857\n", "      - spatialReference: 3857\n        referenceScale: -1\n", 1) +
		"            scaleSymbols: sometimes\n"
	_, err = servicedef.Load(writeConfig(t, bad), providers.Registry())
	var ve *servicedef.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"5:25: referenceScale must not be negative", `9:27: scaleSymbols must be true or false, not "sometimes"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
