package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
)

// TestBannerNamesWhatExists: on a services file without a "world" service, the start banner
// names the first service everywhere (SOAP endpoint, viewer, the Try-it request), and prints the
// services directory and where the admin credential is kept — the file, never the secret.
func TestBannerNamesWhatExists(t *testing.T) {
	sample, err := os.ReadFile("services/services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs("data")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.ReplaceAll(string(sample), "../data/", data+"/")
	yaml = strings.Replace(yaml, "\n  - name: world\n", "\n  - name: countries\n", 1)
	path := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := catalogtest.Open(t, path)
	const base = "http://127.0.0.1:8080"

	var out strings.Builder
	banner{publicURL: base, namespace: "http://schemas.mapfarm.dev/gis/10.7", cat: cat, credFile: "/home/op/.local/state/mapfarm/admin-token-8080"}.write(&out)
	got := out.String()
	for _, want := range []string{
		"SOAP endpoint: " + base + "/arcgis/services/countries/MapServer ",
		"services directory: " + base + "/arcgis/rest/services\n",
		"map viewer: " + base + "/arcgis/rest/services/countries/MapServer/viewer\n",
		"legislative API: " + base + "/api/v2/\n",
		"admin credential (/admin/seed): /home/op/.local/state/mapfarm/admin-token-8080 ",
		`renders map "Layers" of service "countries"`,
		"curl -s -H 'Content-Type: text/xml' " + base + "/arcgis/services/countries/MapServer --data '",
		"<MapDescription><Name>Layers</Name>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("banner lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/services/world/") || strings.Contains(got, "world map") {
		t.Errorf("banner names a world service the file does not have:\n%s", got)
	}

	out.Reset()
	banner{publicURL: base, namespace: "http://schemas.mapfarm.dev/gis/10.7", cat: cat}.write(&out)
	if !strings.Contains(out.String(), "admin credential (/admin/seed): MAPFARM_ADMIN_TOKEN (configured)") {
		t.Errorf("with a configured token:\n%s", out.String())
	}
}
