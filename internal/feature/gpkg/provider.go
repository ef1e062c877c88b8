package gpkg

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Provider is the GeoPackage provider: a source `{geopackage: FILE, table: NAME}` reads a table
// of a GeoPackage file (relative to the service definition's directory). Each file is opened
// once per session and stays open, read-only, until the session closes.
type Provider struct{}

// Name is the source key "geopackage".
func (Provider) Name() string { return "geopackage" }

// Keys are the source keys the GeoPackage provider reads besides its name.
func (Provider) Keys() []string { return []string{"table"} }

// NewSession starts a session that shares each opened file between its sources.
func (Provider) NewSession(provider.Env) provider.Session {
	return &session{files: provider.NewFiles(Open)}
}

// Definition is a GeoPackage source.
type Definition struct {
	// File (`geopackage`) is the GeoPackage file, an absolute path after loading.
	File string
	// Table (`table`, required) is the table inside it, spelled as the file spells it after
	// loading.
	Table string
}

// Provider is "geopackage".
func (Definition) Provider() string { return Provider{}.Name() }

// TableName is the table.
func (d Definition) TableName() string { return d.Table }

// Attachments is the table named table in the same file.
func (d Definition) Attachments(table string) provider.Definition {
	return Definition{File: d.File, Table: table}
}

type session struct {
	files *provider.Files[*File]
}

func (s *session) Decode(src provider.Keys) (provider.Definition, *provider.Schema) {
	d := Definition{File: src.String("geopackage"), Table: src.String("table")}
	if d.File == "" {
		// this provider is also the one a source naming none decodes
		src.Errorf("", "source: missing required key \"geopackage\" (or \"geojson\")")
		return nil, nil
	}
	if d.Table == "" {
		src.Errorf("", "source: missing required key \"table\"")
		return nil, nil
	}
	f, path, ok := s.files.Load(src, "geopackage", "GeoPackage")
	if !ok {
		return nil, nil
	}
	d.File = path
	t, ok := f.Table(d.Table)
	if !ok {
		names := make([]string, 0, len(f.Tables()))
		for _, t := range f.Tables() {
			names = append(names, t.Name)
		}
		src.Errorf("table", "table %q not found in %s (tables: %s)", d.Table, filepath.Base(path), strings.Join(names, ", "))
		return nil, nil
	}
	d.Table = t.Name
	return d, schema(t)
}

// Describe reads the schema of a table of a file the session opened.
func (s *session) Describe(def provider.Definition) (*provider.Schema, bool) {
	d, ok := def.(Definition)
	if !ok {
		return nil, false
	}
	f, err := s.files.Get(d.File)
	if err != nil {
		return nil, false
	}
	t, ok := f.Table(d.Table)
	if !ok {
		return nil, false
	}
	return schema(t), true
}

func schema(t *Table) *provider.Schema {
	return &provider.Schema{Name: t.Name, Fields: t.Fields, OIDField: t.OIDField, HasGeometry: t.GeometryColumn != "",
		GeometryType: t.GeometryType, GeometryTypeName: strings.ToLower(t.GeometryTypeName), SR: t.SR}
}

// Open opens the table on demand: metadata now, rows per query.
func (s *session) Open(ctx context.Context, def provider.Definition) (feature.Source, error) {
	d := def.(Definition)
	f, err := s.files.Get(d.File)
	if err != nil {
		return nil, err
	}
	return f.Source(ctx, d.Table)
}

func (s *session) Close() error { return s.files.Close((*File).Close) }
