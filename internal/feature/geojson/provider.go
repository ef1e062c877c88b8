package geojson

import (
	"context"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Provider is the GeoJSON provider: a source `{geojson: FILE}` reads a GeoJSON
// FeatureCollection file (EPSG:4326, relative to the service definition's directory), whose
// schema is inferred. Each file is parsed once per session and served from memory.
type Provider struct{}

// Name is the source key "geojson".
func (Provider) Name() string { return "geojson" }

// Keys is empty: the file is the whole definition.
func (Provider) Keys() []string { return nil }

// NewSession starts a session that parses each file once.
func (Provider) NewSession(provider.Env) provider.Session {
	return &session{files: provider.NewFiles(Open)}
}

// Definition is a GeoJSON source.
type Definition struct {
	// File (`geojson`) is the file, an absolute path after loading.
	File string
}

// Provider is "geojson".
func (Definition) Provider() string { return Provider{}.Name() }

// TableName is "": a GeoJSON file is one table, named after the file.
func (Definition) TableName() string { return "" }

type session struct {
	files *provider.Files[*File]
}

func (s *session) Decode(src provider.Keys) (provider.Definition, *provider.Schema) {
	if len(src.Written()) > 1 {
		src.Errorf("", "source: set either geojson or geopackage and table, not both")
		return nil, nil
	}
	if src.String("geojson") == "" {
		src.Errorf("geojson", "source: geojson must name a file")
		return nil, nil
	}
	f, path, ok := s.files.Load(src, "geojson", "GeoJSON")
	if !ok {
		return nil, nil
	}
	return Definition{File: path}, &provider.Schema{Name: f.Name, Fields: f.Fields, OIDField: OIDField, HasGeometry: true,
		GeometryType: f.GeometryType, GeometryTypeName: "GeoJSON " + f.GeometryType.Name(), SR: f.SR()}
}

// Open serves the file from memory: as a layer, or as a table when it holds no geometry.
func (s *session) Open(_ context.Context, def provider.Definition) (feature.Source, error) {
	f, err := s.files.Get(def.(Definition).File)
	if err != nil {
		return nil, err
	}
	if f.GeometryType == feature.None {
		return f.ReadAttributes(), nil
	}
	return f.ReadLayer(f.SR())
}

func (s *session) Close() error { return s.files.Close(func(*File) error { return nil }) }
