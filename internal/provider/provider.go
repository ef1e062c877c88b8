// Package provider is the table of feature-data providers: the kinds of data a layer or a
// standalone table of a service definition can read (a GeoPackage table, a GeoJSON file, a
// PostGIS table or SQL view). Each provider owns the three things that used to be spread over
// the loader and the catalog: the keys of its `source:` mapping and what they mean (its
// Definition), how that definition is checked against the data at load, and how its data is
// opened to be served (a feature.Source).
//
// There is no global list: the program builds one Registry with the providers it links, in a
// fixed order (internal/app/providers), and internal/app hands it to servicedef.Load, which
// decodes every source through it, and to catalog.Open, which opens every source through it. A
// new provider is a type implementing Provider and one more argument to NewRegistry.
//
// A provider that can do more than stream features implements it on its Session's sources: a
// database that encodes vector tiles itself (PostGIS's ST_AsMVT) will expose that as an optional
// method there, found with a type assertion by the tile front end, the way feature.Source users
// find the optional capabilities of a source. Nothing here builds tiles yet.
package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Provider is one kind of feature data.
type Provider interface {
	// Name is the provider's key in a source mapping: a source that has the key is the
	// provider's ("geopackage", "geojson", "postgis").
	Name() string
	// Keys are the source keys the provider reads besides its name, in the order its messages
	// list them. Keys may be shared between providers ("table").
	Keys() []string
	// NewSession starts the provider's part of one load or one catalog: the files and
	// database pools it opens are shared by every source that names them, until Close.
	NewSession(env Env) Session
}

// Session decodes, checks and opens one provider's sources, sharing what it opens between them.
// A Session is used by one goroutine.
type Session interface {
	// Decode reads the source mapping src into a Definition and checks it against the data
	// where the provider can do that at load (files are opened, databases are not), reporting
	// every problem through src. It returns the schema of the definition's table, or nil when
	// the data is only read when the source opens; the definition is nil when the source is
	// beyond repair.
	Decode(src Keys) (Definition, *Schema)
	// Open opens the data of def (a Definition this provider decoded, or built in Go) as a
	// feature.Source in its own spatial reference. Opening reads metadata only.
	Open(ctx context.Context, def Definition) (feature.Source, error)
	// Close releases what the session opened.
	Close() error
}

// Definition is where one layer's or table's rows come from, as a provider decoded it. It is a
// comparable value: two equal definitions read the same data, and a catalog opens it once.
type Definition interface {
	// Provider names the provider that reads it (its Name).
	Provider() string
	// TableName is the table the definition reads, as written ("" for a provider without
	// tables).
	TableName() string
}

// Attacher is a Definition whose table may have an attachments table beside it (ArcGIS's
// `<table>__ATTACH`, see servicedef.Queryable).
type Attacher interface {
	Definition
	// Attachments returns the definition of the attachments table named table, in the same
	// data.
	Attachments(table string) Definition
}

// Describer is a Session that can read the schema of a definition at load without reporting
// through a source mapping: the attachments table of a layer is checked with it.
type Describer interface {
	Describe(def Definition) (*Schema, bool)
}

// Schema is what validating a service definition needs to know about a source table,
// whatever its provider.
type Schema struct {
	// Name is the table's name.
	Name string
	// Fields are the table's columns.
	Fields []feature.Field
	// OIDField is the object-ID column ("" when none).
	OIDField string
	// HasGeometry is false for a table without a geometry column.
	HasGeometry bool
	// GeometryType is the data's single geometry type, feature.None when mixed or unknown.
	GeometryType feature.GeometryType
	// GeometryTypeName is how messages name the data's geometry type.
	GeometryTypeName string
	// SR is the spatial reference the data is stored in.
	SR proj.SR
}

// Field returns the column named name, case-insensitively.
func (s *Schema) Field(name string) (feature.Field, bool) {
	for _, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return feature.Field{}, false
}

// Keys is one source mapping of a service definition as a provider reads it. Every value is a
// string; problems are reported at the key they concern, with its line and column.
type Keys interface {
	// Has reports whether the key is written.
	Has(key string) bool
	// Written lists the keys written, in no particular order.
	Written() []string
	// String is the key's value ("" when absent).
	String(key string) string
	// Path is the key's value as a path, made absolute against the definition file's
	// directory.
	Path(key string) string
	// Errorf reports a problem at the key's value; key "" reports it at the mapping.
	Errorf(key, format string, args ...any)
}

// Env is what a provider may read of the service definition beyond a source's own keys.
type Env struct {
	// Connections are the definition's database connections (`connections:`), by name.
	Connections map[string]*Connection
}

// Connection is one database connection of the top-level `connections:` map, which PostGIS
// sources name:
//
//	connections:
//	  gis:
//	    dsn: "host=db.internal port=5432 dbname=gis user=mapfarm sslmode=verify-full"
//	    passwordEnv: MAPFARM_GIS_PASSWORD   # or passwordFile: /run/secrets/gis
//	    statementTimeout: 30s
//
// The secret never sits in the YAML: a password in `dsn` (key=value `password=…` or a URL's
// user:password@) is refused at load (package servicedef decodes the map). Either `dsn` (with at
// most one of `passwordEnv` and `passwordFile`) or the whole DSN from `dsnEnv` or `dsnFile` is
// given. The environment and files are read when the connection opens (Resolve), not at load.
type Connection struct {
	// Name is the connection's key in `connections`.
	Name string
	// DSN (`dsn`) is a libpq connection string (key=value or URL) without
	// a password.
	DSN string
	// PasswordEnv (`passwordEnv`) names the environment variable holding
	// the password.
	PasswordEnv string
	// PasswordFile (`passwordFile`) is a file holding the password (one
	// line; relative to the configuration file, absolute after Load).
	PasswordFile string
	// DSNEnv (`dsnEnv`) and DSNFile (`dsnFile`) hold the whole DSN,
	// password included, instead of dsn.
	DSNEnv  string
	DSNFile string
	// StatementTimeout (`statementTimeout`, default 30s) is the
	// server-side statement_timeout of every statement.
	StatementTimeout time.Duration
	// MaxConnections (`maxConnections`, default: pgxpool's, 4 or the CPU
	// count) bounds the connection pool.
	MaxConnections int
}

// Resolve reads the secret from the environment or its file and returns
// the DSN and the password to connect with ("" when the DSN carries it).
func (c *Connection) Resolve() (dsn, password string, err error) {
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("connection %s: %w", c.Name, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	env := func(name string) (string, error) {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return "", fmt.Errorf("connection %s: environment variable %s is not set", c.Name, name)
		}
		return v, nil
	}
	switch {
	case c.DSNEnv != "":
		dsn, err = env(c.DSNEnv)
		return dsn, "", err
	case c.DSNFile != "":
		dsn, err = read(c.DSNFile)
		return dsn, "", err
	case c.PasswordEnv != "":
		password, err = env(c.PasswordEnv)
	case c.PasswordFile != "":
		password, err = read(c.PasswordFile)
	}
	return c.DSN, password, err
}

// Files opens data files once each for a Session, remembering a failure as well as a file.
type Files[F any] struct {
	open  func(path string) (F, error)
	files map[string]opened[F]
	order []string
}

type opened[F any] struct {
	f   F
	err error
}

// NewFiles returns an empty set of files opened with open.
func NewFiles[F any](open func(path string) (F, error)) *Files[F] {
	return &Files[F]{open: open, files: map[string]opened[F]{}}
}

// Get opens the file at the absolute path path, the first time only.
func (fs *Files[F]) Get(path string) (F, error) {
	e, ok := fs.files[path]
	if !ok {
		e.f, e.err = fs.open(path)
		fs.files[path] = e
		fs.order = append(fs.order, path)
	}
	return e.f, e.err
}

// Load opens the file that src's key names (relative to the definition's directory) and
// returns it with its absolute path. A missing file, or one that cannot be read as kind (the
// format's name in messages), is reported at the key.
func (fs *Files[F]) Load(src Keys, key, kind string) (F, string, bool) {
	path := src.Path(key)
	if _, err := os.Stat(path); err != nil {
		src.Errorf(key, "data file %s not found", path)
		var zero F
		return zero, path, false
	}
	f, err := fs.Get(path)
	if err != nil {
		src.Errorf(key, "cannot read %s %s: %v", kind, path, err)
		return f, path, false
	}
	return f, path, true
}

// Close calls closeFile on every file that opened, in the order they did, and forgets them.
func (fs *Files[F]) Close(closeFile func(F) error) error {
	var errs []error
	for _, p := range fs.order {
		if e := fs.files[p]; e.err == nil {
			errs = append(errs, closeFile(e.f))
		}
	}
	fs.files, fs.order = map[string]opened[F]{}, nil
	return errors.Join(errs...)
}
