package vectorstyle_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/golden"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

func load(t *testing.T, path string) *servicedef.Config {
	t.Helper()
	cfg, err := servicedef.Load(path, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func service(t *testing.T, cfg *servicedef.Config, name string) *servicedef.Service {
	t.Helper()
	for _, s := range cfg.Services {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no service %q", name)
	return nil
}

func serviceURL(name string) string {
	return "https://maps.example.com/arcgis/rest/services/" + name + "/VectorTileServer"
}

// generate writes a service's style and reads it back as a client does (numbers as float64).
func generate(t *testing.T, svc *servicedef.Service) (raw []byte, doc map[string]any) {
	t.Helper()
	st, err := vectorstyle.New(svc, svc.Maps[0], vectorstyle.Options{ServiceURL: serviceURL(svc.Name)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err = st.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return raw, doc
}

// TestGolden writes the styles of the sample services world and usa and of the test symbology,
// checks them against the style specification's rules, and compares them with the golden files
// (MAPFARM_UPDATE_GOLDEN=1 go test -run TestGolden rewrites them; internal/golden).
func TestGolden(t *testing.T) {
	samples := load(t, filepath.Join("..", "..", "services", "services.yaml"))
	symbology := load(t, filepath.Join("testdata", "symbology.yaml"))
	for _, svc := range []*servicedef.Service{service(t, samples, "world"), service(t, samples, "usa"), service(t, symbology, "symbology")} {
		t.Run(svc.Name, func(t *testing.T) {
			raw, doc := generate(t, svc)
			checkStyle(t, doc, svc.Maps[0])
			golden.Check(t, filepath.Join("testdata", svc.Name+".json"), raw)
		})
	}
}

func TestOptions(t *testing.T) {
	cfg := load(t, filepath.Join("..", "..", "services", "services.yaml"))
	svc := service(t, cfg, "world")
	for _, u := range []string{"", "/arcgis/rest/services/world/VectorTileServer", "ftp://x/y", "https:///nohost"} {
		if _, err := vectorstyle.New(svc, svc.Maps[0], vectorstyle.Options{ServiceURL: u}); err == nil {
			t.Errorf("ServiceURL %q: no error, want one (style URLs must be absolute)", u)
		}
	}
	if _, err := vectorstyle.New(svc, svc.Maps[0], vectorstyle.Options{ServiceURL: serviceURL("world"), MaxZoom: 25}); err == nil {
		t.Error("MaxZoom 25: no error")
	}
	st, err := vectorstyle.New(svc, svc.Maps[0], vectorstyle.Options{ServiceURL: serviceURL("world") + "/", MaxZoom: 7})
	if err != nil {
		t.Fatal(err)
	}
	src := st.Sources[vectorstyle.SourceName]
	if src.Tiles[0] != serviceURL("world")+"/tile/{z}/{y}/{x}.pbf" || src.MaxZoom != 7 {
		t.Errorf("source %+v", src)
	}
	if st.Glyphs != serviceURL("world")+"/resources/fonts/{fontstack}/{range}.pbf" || st.Sprite != serviceURL("world")+"/resources/sprites/sprite" {
		t.Errorf("glyphs %q, sprite %q", st.Glyphs, st.Sprite)
	}
}

func TestZoomFor(t *testing.T) {
	for _, c := range []struct{ scale, zoom float64 }{
		{295828763.7957775, 0}, {147914381.89788875, 1}, {50000000, 2.565}, {1128.497176, 18},
	} {
		if z := vectorstyle.ZoomFor(c.scale); z != c.zoom {
			t.Errorf("ZoomFor(%g) = %g, want %g", c.scale, z, c.zoom)
		}
	}
}
