package servicedef

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/provider"
)

// Connection is one database connection of the top-level `connections:`
// map, which PostGIS sources name. The type belongs to package provider,
// which hands the connections to the providers; this package decodes the
// map (connections, below).
type Connection = provider.Connection

// identifier is what a connection name may look like: a plain SQL
// identifier.
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
