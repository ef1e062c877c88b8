package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLimits: the limits table's defaults (docs/limits.md), read from YAML and from the
// environment, which wins; a DPI bound beyond the renderer's is refused.
func TestLimits(t *testing.T) {
	c := mustLoad(t, "")
	want := Limits{MaxBodyBytes: 8 << 20, MaxImageWidth: 4096, MaxImageHeight: 4096, MaxImageDPI: 2400,
		MaxElements: 1_000_000, MaxDepth: 64, MaxDecodedBytes: 10 << 20, MaxVertices: 100_000, MaxPoints: 100_000,
		MaxIDs: 100_000, MaxStringBytes: 64 << 10, RenderTimeout: 30 * time.Second, OperationTimeout: time.Minute,
		OutputTTL: 10 * time.Minute, MaxRecordCount: 1000, APIMemoryLimit: 180 << 20,
		VectorTileMaxFeatures: 100_000, VectorTileMaxBytes: 8 << 20, VectorTileTimeout: 30 * time.Second}
	if c.Limits != want {
		t.Errorf("defaults\n%+v, want\n%+v", c.Limits, want)
	}
	path := filepath.Join(t.TempDir(), "mapfarm.yaml")
	if err := os.WriteFile(path, []byte("limits:\n  maxVertices: 5000\n  maxIDs: 20\n  maxImageDPI: 600\n  maxDecodedBytes: 1048576\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = mustLoad(t, path)
	if l := c.Limits; l.MaxVertices != 5000 || l.MaxIDs != 20 || l.MaxImageDPI != 600 || l.MaxDecodedBytes != 1<<20 || l.MaxElements != 1_000_000 {
		t.Errorf("from YAML %+v", l)
	}
	t.Setenv("MAPFARM_MAX_VERTICES", "7")
	t.Setenv("MAPFARM_MAX_ELEMENTS", "1000")
	t.Setenv("MAPFARM_MAX_STRING_BYTES", "100")
	t.Setenv("MAPFARM_MAX_DECODED_BYTES", "4096")
	t.Setenv("MAPFARM_MAX_IMAGE_WIDTH", "1024")
	t.Setenv("MAPFARM_MAX_RECORD_COUNT", "50")
	c = mustLoad(t, path)
	if l := c.Limits; l.MaxVertices != 7 || l.MaxElements != 1000 || l.MaxStringBytes != 100 || l.MaxDecodedBytes != 4096 ||
		l.MaxImageWidth != 1024 || l.MaxRecordCount != 50 || l.MaxIDs != 20 {
		t.Errorf("from the environment %+v", l)
	}
	t.Setenv("MAPFARM_MAX_IMAGE_DPI", "9600")
	if _, err := Load(""); err == nil {
		t.Error("MAPFARM_MAX_IMAGE_DPI=9600 was accepted")
	}
	t.Setenv("MAPFARM_MAX_IMAGE_DPI", "300")
	t.Setenv("MAPFARM_MAX_IDS", "many")
	if _, err := Load(""); err == nil {
		t.Error("MAPFARM_MAX_IDS=many was accepted")
	}
}

// TestVectorTileLimits: the vector tile limits are set from YAML and the environment (their
// defaults, the encoder's own, are in TestLimits; internal/app's TestVectorTileOptions holds
// them equal to internal/mvt's).
func TestVectorTileLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapfarm.yaml")
	if err := os.WriteFile(path, []byte("limits:\n  vectorTileMaxFeatures: 5000\n  vectorTileTimeout: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAPFARM_VECTOR_TILE_MAX_BYTES", "65536")
	l := mustLoad(t, path).Limits
	if l.VectorTileMaxFeatures != 5000 || l.VectorTileTimeout != 5*time.Second || l.VectorTileMaxBytes != 65536 {
		t.Errorf("from YAML and the environment: %d features, %d bytes, %v", l.VectorTileMaxFeatures, l.VectorTileMaxBytes, l.VectorTileTimeout)
	}
}

// mustLoad loads the configuration at path ("" for none), failing the test on an error.
func mustLoad(t *testing.T, path string) *Config {
	t.Helper()
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
