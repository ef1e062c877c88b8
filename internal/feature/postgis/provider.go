package postgis

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Provider is the PostGIS provider: a source `{postgis: CONNECTION, table: NAME}` or
// `{postgis: CONNECTION, sql: SELECT …, idColumn: …}` reads a table, view or query of the
// database that a connection of the definition's `connections:` names. The database is not
// contacted at load: the schema is read, and the names checked against it, when the source
// opens. One pool serves every source of a connection within a session.
type Provider struct{}

// Name is the source key "postgis".
func (Provider) Name() string { return "postgis" }

// Keys are the source keys the PostGIS provider reads besides its name.
func (Provider) Keys() []string { return []string{"table", "sql", "geometryColumn", "idColumn"} }

// NewSession starts a session with the definition's connections; their pools are made on
// first use.
func (Provider) NewSession(env provider.Env) provider.Session {
	return &session{conns: env.Connections, pools: map[string]*Pool{}}
}

// Definition is a PostGIS source.
type Definition struct {
	// Connection (`postgis`) names the connection, a key of `connections`.
	Connection string
	// Table (`table`, "name" or "schema.name") or SQL (`sql`, one SELECT statement) names
	// the rows; exactly one is set.
	Table string
	SQL   string
	// GeometryColumn (`geometryColumn`, default: the only geometry column) and IDColumn
	// (`idColumn`, default: the table's integer primary key; required with sql) name the
	// columns.
	GeometryColumn string
	IDColumn       string
}

// Provider is "postgis".
func (Definition) Provider() string { return Provider{}.Name() }

// TableName is the table ("" for a SQL source).
func (d Definition) TableName() string { return d.Table }

// Attachments is the table named table through the same connection.
func (d Definition) Attachments(table string) provider.Definition {
	return Definition{Connection: d.Connection, Table: table}
}

// identifier is what a table, schema or column name from the service definition may look
// like: a plain SQL identifier (it is quoted when used, so its case is kept).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}$`)

type session struct {
	conns map[string]*provider.Connection
	pools map[string]*Pool // by connection name
}

// Decode checks a PostGIS source without contacting the database. It returns the definition
// even when it reports problems (but for a missing connection), so that the layer can say what
// else it misses, and never a schema.
func (s *session) Decode(src provider.Keys) (provider.Definition, *provider.Schema) {
	d := Definition{Connection: src.String("postgis"), Table: src.String("table"), SQL: src.String("sql"),
		GeometryColumn: src.String("geometryColumn"), IDColumn: src.String("idColumn")}
	if src.Has("geopackage") || src.Has("geojson") {
		src.Errorf("", "source: set postgis or geopackage or geojson, not several")
		return d.named(), nil
	}
	if _, ok := s.conns[d.Connection]; !ok {
		names := make([]string, 0, len(s.conns))
		for k := range s.conns {
			names = append(names, k)
		}
		src.Errorf("postgis", "source: postgis connection %q is not defined in connections (defined: %s)", d.Connection, strings.Join(names, ", "))
	}
	switch {
	case src.Has("table") == src.Has("sql"):
		src.Errorf("", "source: a postgis source needs exactly one of table and sql")
	case src.Has("table"):
		schema, table, dotted := strings.Cut(d.Table, ".")
		if !dotted {
			schema, table = "", d.Table
		}
		if !identifier.MatchString(table) || (dotted && !identifier.MatchString(schema)) {
			src.Errorf("table", "source: table %q: want name or schema.name of letters, digits, _ and $", d.Table)
		}
	default:
		sql := strings.ToUpper(strings.TrimSpace(d.SQL))
		if !strings.HasPrefix(sql, "SELECT") && !strings.HasPrefix(sql, "WITH") || strings.Contains(sql, ";") {
			src.Errorf("sql", "source: sql must be one SELECT statement, without ';'")
		}
		if d.IDColumn == "" {
			src.Errorf("", "source: a postgis sql source needs idColumn")
		}
	}
	for _, key := range []string{"geometryColumn", "idColumn"} {
		if v := src.String(key); src.Has(key) && !identifier.MatchString(v) {
			src.Errorf(key, "source: %s %q: want a column name of letters, digits, _ and $", key, v)
		}
	}
	if d.Connection == "" {
		src.Errorf("", "source: postgis must name a connection")
	}
	return d.named(), nil
}

// named is d, or nil when d names no connection (a layer then says nothing of its missing
// geometryType: the connection is the first thing to fix).
func (d Definition) named() provider.Definition {
	if d.Connection == "" {
		return nil
	}
	return d
}

// pool returns the pool of a named connection, made once. It connects on first use.
func (s *session) pool(name string) (*Pool, error) {
	if p, ok := s.pools[name]; ok {
		return p, nil
	}
	c, ok := s.conns[name]
	if !ok {
		return nil, fmt.Errorf("no connection %q", name)
	}
	dsn, password, err := c.Resolve()
	if err != nil {
		return nil, err
	}
	p, err := NewPool(PoolConfig{Name: c.Name, DSN: dsn, Password: password,
		StatementTimeout: c.StatementTimeout, MaxConns: int32(c.MaxConnections)})
	if err != nil {
		return nil, err
	}
	s.pools[name] = p
	return p, nil
}

// Open reads the table's or query's schema and returns a source that queries it on demand.
func (s *session) Open(ctx context.Context, def provider.Definition) (feature.Source, error) {
	d := def.(Definition)
	p, err := s.pool(d.Connection)
	if err != nil {
		return nil, err
	}
	return Open(ctx, p, Table{Table: d.Table, SQL: d.SQL, GeometryColumn: d.GeometryColumn, IDColumn: d.IDColumn})
}

func (s *session) Close() error {
	for _, p := range s.pools {
		p.Close()
	}
	s.pools = map[string]*Pool{}
	return nil
}
