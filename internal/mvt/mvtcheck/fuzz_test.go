package mvtcheck_test

import (
	"os"
	"testing"

	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
)

// FuzzCheck feeds arbitrary bytes to Check and Decode: tiles come from
// storage and other tools, and a bad one must give problems or an error,
// never a panic or a hang.
func FuzzCheck(f *testing.F) {
	f.Add(build(good()))
	f.Add(build(good(), lay{name: "m", version: 2, extent: 512}))
	if golden, err := os.ReadFile("../testdata/world-1-0-0.pbf"); err == nil {
		f.Add(golden)
	}
	f.Add([]byte{0x1f, 0x8b, 0x08})
	f.Fuzz(func(t *testing.T, tile []byte) {
		probs, _ := mvtcheck.Check(tile, mvtcheck.Options{MaxBuffer: 64, MaxProblems: 50})
		if len(probs) > 50 {
			t.Fatalf("%d problems, more than MaxProblems", len(probs))
		}
		ls, err := mvtcheck.Decode(tile)
		if err == nil && len(probs) == 0 {
			for _, l := range ls {
				for _, feat := range l.Features {
					if feat.Geometry == nil {
						t.Fatalf("a valid tile decoded with a nil geometry in layer %q", l.Name)
					}
				}
			}
		}
	})
}
