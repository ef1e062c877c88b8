package servicedef

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Connection is one database connection of the top-level `connections:`
// map, which PostGIS sources name:
//
//	connections:
//	  gis:
//	    dsn: "host=db.internal port=5432 dbname=gis user=mapfarm sslmode=verify-full"
//	    passwordEnv: MAPFARM_GIS_PASSWORD   # or passwordFile: /run/secrets/gis
//	    statementTimeout: 30s
//
// The secret never sits in the YAML: a password in `dsn` (key=value
// `password=…` or a URL's user:password@) is refused at load. Either `dsn`
// (with at most one of `passwordEnv` and `passwordFile`) or the whole DSN
// from `dsnEnv` or `dsnFile` is given. The environment and files are read
// when the connection opens (Resolve), not at load.
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

// identifier is what a table, schema or column name from the service
// definition may look like: a plain SQL identifier (it is quoted when
// used, so its case is kept).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}$`)

// dsnPassword matches a password key in a key=value DSN.
var dsnPassword = regexp.MustCompile(`(?i)(^|\s)password\s*=`)

// hasPassword reports whether a DSN spells out a password.
func hasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return strings.Contains(dsn, "@") // unparsable: refuse user:secret@ to be safe
		}
		_, set := u.User.Password()
		return set || u.Query().Has("password")
	}
	return dsnPassword.MatchString(dsn)
}

// connections decodes the top-level `connections` map.
func (l *loader) connections(n *yaml.Node) map[string]*Connection {
	out := map[string]*Connection{}
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		l.errorf(n, "connections must be a mapping of names to connections")
		return out
	}
	for _, p := range l.pairs(n) {
		name := p.key.Value
		if !identifier.MatchString(name) {
			l.errorf(p.key, "connection name %q: use letters, digits and underscores", name)
			continue
		}
		c := &Connection{Name: name, StatementTimeout: 30 * time.Second}
		var dsnNode, timeoutNode *yaml.Node
		if !l.fields(p.val, "connection "+name, map[string]func(*yaml.Node){
			"dsn":              func(v *yaml.Node) { dsnNode = v; c.DSN = l.str(v, "dsn") },
			"passwordEnv":      func(v *yaml.Node) { c.PasswordEnv = l.str(v, "passwordEnv") },
			"passwordFile":     func(v *yaml.Node) { c.PasswordFile = l.abs(l.str(v, "passwordFile")) },
			"dsnEnv":           func(v *yaml.Node) { c.DSNEnv = l.str(v, "dsnEnv") },
			"dsnFile":          func(v *yaml.Node) { c.DSNFile = l.abs(l.str(v, "dsnFile")) },
			"statementTimeout": func(v *yaml.Node) { timeoutNode = v },
			"maxConnections":   func(v *yaml.Node) { c.MaxConnections = l.int(v, "maxConnections") },
			"password": func(v *yaml.Node) {
				l.errorf(resolve(v), "connection %s: a password must not be written in the service definition: use passwordEnv or passwordFile", name)
			},
		}) {
			continue
		}
		at := resolve(p.val)
		sources := 0
		for _, s := range []string{c.DSN, c.DSNEnv, c.DSNFile} {
			if s != "" {
				sources++
			}
		}
		switch {
		case sources != 1:
			l.errorf(at, "connection %s: set exactly one of dsn, dsnEnv and dsnFile", name)
		case c.DSN == "" && (c.PasswordEnv != "" || c.PasswordFile != ""):
			l.errorf(at, "connection %s: passwordEnv and passwordFile go with dsn", name)
		case c.PasswordEnv != "" && c.PasswordFile != "":
			l.errorf(at, "connection %s: set passwordEnv or passwordFile, not both", name)
		case c.DSN != "" && hasPassword(c.DSN):
			l.errorf(resolve(dsnNode), "connection %s: the dsn holds a password in clear: remove it and use passwordEnv or passwordFile (or dsnEnv/dsnFile for the whole DSN)", name)
		}
		if timeoutNode != nil {
			d, err := time.ParseDuration(l.str(timeoutNode, "statementTimeout"))
			if err != nil || d <= 0 {
				l.errorf(resolve(timeoutNode), "connection %s: statementTimeout %q: want a positive duration such as 30s", name, resolve(timeoutNode).Value)
			}
			c.StatementTimeout = d
		}
		if c.MaxConnections < 0 {
			l.errorf(at, "connection %s: maxConnections must not be negative", name)
		}
		out[name] = c
	}
	return out
}

// postgisNodes collects the PostGIS keys of a source.
type postgisNodes struct {
	conn, sql, geom, id *yaml.Node
}

func (p *postgisNodes) handlers(l *loader, src *Source) map[string]func(*yaml.Node) {
	return map[string]func(*yaml.Node){
		"postgis":        func(v *yaml.Node) { p.conn = v; src.PostGIS = l.str(v, "postgis") },
		"sql":            func(v *yaml.Node) { p.sql = v; src.SQL = l.str(v, "sql") },
		"geometryColumn": func(v *yaml.Node) { p.geom = v; src.GeometryColumn = l.str(v, "geometryColumn") },
		"idColumn":       func(v *yaml.Node) { p.id = v; src.IDColumn = l.str(v, "idColumn") },
	}
}

// postgisSource checks a PostGIS source. The database is not contacted
// at load: the table's schema is read, and the names checked against it,
// when the source opens.
func (l *loader) postgisSource(n *yaml.Node, pg *postgisNodes, tableNode, pathNode, jsonNode *yaml.Node, src *Source) {
	at := resolve(n)
	if pathNode != nil || jsonNode != nil {
		l.errorf(at, "source: set postgis or geopackage or geojson, not several")
		return
	}
	if _, ok := l.conns[src.PostGIS]; !ok {
		names := make([]string, 0, len(l.conns))
		for k := range l.conns {
			names = append(names, k)
		}
		l.errorf(resolve(pg.conn), "source: postgis connection %q is not defined in connections (defined: %s)", src.PostGIS, strings.Join(names, ", "))
	}
	switch {
	case (tableNode == nil) == (pg.sql == nil):
		l.errorf(at, "source: a postgis source needs exactly one of table and sql")
	case tableNode != nil:
		schema, table, dotted := strings.Cut(src.Table, ".")
		if !dotted {
			schema, table = "", src.Table
		}
		if !identifier.MatchString(table) || (dotted && !identifier.MatchString(schema)) {
			l.errorf(resolve(tableNode), "source: table %q: want name or schema.name of letters, digits, _ and $", src.Table)
		}
	default:
		sql := strings.TrimSpace(src.SQL)
		if !strings.HasPrefix(strings.ToUpper(sql), "SELECT") && !strings.HasPrefix(strings.ToUpper(sql), "WITH") || strings.Contains(sql, ";") {
			l.errorf(resolve(pg.sql), "source: sql must be one SELECT statement, without ';'")
		}
		if src.IDColumn == "" {
			l.errorf(at, "source: a postgis sql source needs idColumn")
		}
	}
	for _, c := range []struct {
		node *yaml.Node
		val  string
		key  string
	}{{pg.geom, src.GeometryColumn, "geometryColumn"}, {pg.id, src.IDColumn, "idColumn"}} {
		if c.node != nil && !identifier.MatchString(c.val) {
			l.errorf(resolve(c.node), "source: %s %q: want a column name of letters, digits, _ and $", c.key, c.val)
		}
	}
	if pg.conn == nil || src.PostGIS == "" {
		l.errorf(at, "source: postgis must name a connection")
	}
}
