package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPictures: the picture fetching settings default to no hosts, 1 MiB and 5 s, and are read
// from YAML and from MAPFARM_PICTURE_HOSTS.
func TestPictures(t *testing.T) {
	c := mustLoad(t, "")
	if p := c.Pictures; len(p.AllowedHosts) != 0 || p.MaxBytes != 1<<20 || p.Timeout != 5*time.Second {
		t.Errorf("defaults %+v", p)
	}
	path := filepath.Join(t.TempDir(), "mapfarm.yaml")
	if err := os.WriteFile(path, []byte("pictures:\n  allowedHosts: [tiles.example.org]\n  maxBytes: 4096\n  timeout: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = mustLoad(t, path)
	if p := c.Pictures; len(p.AllowedHosts) != 1 || p.AllowedHosts[0] != "tiles.example.org" || p.MaxBytes != 4096 || p.Timeout != 2*time.Second {
		t.Errorf("from YAML %+v", p)
	}
	t.Setenv("MAPFARM_PICTURE_HOSTS", " a.example.org, b.example.org:8080 ,")
	c = mustLoad(t, path)
	if h := c.Pictures.AllowedHosts; len(h) != 2 || h[0] != "a.example.org" || h[1] != "b.example.org:8080" {
		t.Errorf("from the environment %q", h)
	}
}
