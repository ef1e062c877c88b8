//go:build !proj

package proj_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestBuiltinEngineRefusesOthers: without PROJ, any system but 4326 and Web Mercator is an
// error naming its WKID.
func TestBuiltinEngineRefusesOthers(t *testing.T) {
	sys := proj.NewSystems(0)
	for _, tc := range []struct{ from, to int }{{4326, 32633}, {27700, 3857}, {5070, 5070}} {
		_, err := sys.Transformer(proj.SR{WKID: tc.from}, proj.SR{WKID: tc.to})
		if !errors.Is(err, proj.ErrUnsupported) {
			t.Errorf("Transformer(%d, %d) error = %v, want ErrUnsupported", tc.from, tc.to, err)
			continue
		}
		if !strings.Contains(err.Error(), "WKID") {
			t.Errorf("Transformer(%d, %d) error %q does not name the WKID", tc.from, tc.to, err)
		}
	}
	if _, err := proj.Transform(proj.SR{WKID: 4326}, proj.SR{WKID: 32633}); !errors.Is(err, proj.ErrUnsupported) {
		t.Errorf("Transform(4326, 32633) error = %v", err)
	}
}
