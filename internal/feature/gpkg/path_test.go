package gpkg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
)

// Paths with spaces and URI-special characters open correctly (the file is
// opened through a file: URI).
func TestOpenOddPath(t *testing.T) {
	data, err := os.ReadFile(sample("us_states_10m_4326.gpkg"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my data #1 ?&%")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "states 50%.gpkg")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := gpkg.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.Table("states"); !ok {
		t.Fatalf("tables = %v", f.Tables())
	}
}
