package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The Redis settings' names, as errors quote them: the YAML key and the environment variable.
const (
	settingAddr      = "redis.addr (MAPFARM_REDIS_ADDR)"
	settingURL       = "redis.url (MAPFARM_REDIS_URL)"
	settingMaster    = "redis.sentinelMaster (MAPFARM_REDIS_SENTINEL_MASTER)"
	settingSentinels = "redis.sentinels (MAPFARM_REDIS_SENTINELS)"
	settingDB        = "redis.db (MAPFARM_REDIS_DB)"
)

// yamlSecrets refuses a password in the YAML file's redis.url: secrets come from the environment.
func (r Redis) yamlSecrets(path string) error {
	if r.URL == "" {
		return nil
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil // validate reports it
	}
	if _, ok := u.User.Password(); ok {
		return fmt.Errorf("config: %s: redis.url holds a password; secrets never go in the file: set MAPFARM_REDIS_PASSWORD (or _FILE), or the whole URL in MAPFARM_REDIS_URL (or _FILE)", path)
	}
	return nil
}

// Embedded reports whether the in-process server is used: no address, URL or Sentinel is set.
func (r Redis) Embedded() bool {
	return r.Addr == "" && r.URL == "" && r.SentinelMaster == "" && len(r.Sentinels) == 0
}

// Sentinel reports whether the farm reaches Redis through a Sentinel group.
func (r Redis) Sentinel() bool { return r.SentinelMaster != "" || len(r.Sentinels) != 0 }

// RedisURL is a parsed, checked redis.url.
type RedisURL struct {
	Addr     string // host:port (port 6379 when the URL names none)
	Username string
	Password string
	DB       int  // -1 when the URL names no database
	TLS      bool // rediss://
}

// ParseURL parses and checks redis.url; its errors name the setting and never hold the password.
func (r Redis) ParseURL() (RedisURL, error) {
	fail := func(format string, a ...any) (RedisURL, error) {
		return RedisURL{}, fmt.Errorf("config: "+settingURL+": "+format, a...)
	}
	if !strings.Contains(r.URL, "://") {
		return fail("no scheme; the form is redis://[user[:password]@]host[:port][/db] or rediss://… (a bare host:port goes in redis.addr)")
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		// url.Error quotes the whole URL, password included: say what is wrong without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail("not a URL (%v); the form is redis://[user[:password]@]host[:port][/db] or rediss://…", err)
	}
	out := RedisURL{DB: -1, Username: u.User.Username()}
	out.Password, _ = u.User.Password()
	switch u.Scheme {
	case "redis":
	case "rediss":
		out.TLS = true
	default:
		return fail("scheme %q is neither redis:// nor rediss:// (for Sentinel set redis.sentinelMaster and redis.sentinels)", u.Scheme)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fail("no host; the form is %s://[user[:password]@]host[:port][/db]", u.Scheme)
	}
	if port == "" {
		port = "6379"
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fail("port %q is not a port number", port)
	}
	out.Addr = net.JoinHostPort(host, port)
	if p := strings.Trim(u.Path, "/"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return fail("the path %q is not a database number (redis://host:port/2 selects database 2)", u.Path)
		}
		out.DB = n
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fail("query parameters and fragments are not supported (set TLS with rediss://, the database in the path)")
	}
	return out, nil
}

// validate reports the Redis settings' inconsistencies, each naming the setting.
func (r Redis) validate() []error {
	var errs []error
	var set []string
	if r.Addr != "" {
		set = append(set, settingAddr)
	}
	if r.URL != "" {
		set = append(set, settingURL)
	}
	if r.Sentinel() {
		set = append(set, "Sentinel ("+settingMaster+" and "+settingSentinels+")")
	}
	if len(set) > 1 {
		errs = append(errs, fmt.Errorf("config: %s are alternatives; set one", strings.Join(set, ", ")))
	}
	if r.DB < 0 {
		errs = append(errs, fmt.Errorf("config: %s is %d; database numbers start at 0", settingDB, r.DB))
	}
	if r.URL != "" {
		u, err := r.ParseURL()
		if err != nil {
			errs = append(errs, err)
		} else if u.DB >= 0 && r.DB != 0 && u.DB != r.DB {
			errs = append(errs, fmt.Errorf("config: %s names database %d but %s is %d; set one", settingURL, u.DB, settingDB, r.DB))
		}
	}
	if r.Sentinel() {
		if r.SentinelMaster == "" {
			errs = append(errs, fmt.Errorf("config: %s is set but %s is not: name the master the sentinels monitor", settingSentinels, settingMaster))
		}
		if len(r.Sentinels) == 0 {
			errs = append(errs, fmt.Errorf("config: %s is set but %s is not: list the sentinels' host:port addresses", settingMaster, settingSentinels))
		}
		for _, s := range r.Sentinels {
			host, port, err := net.SplitHostPort(s)
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
				errs = append(errs, fmt.Errorf("config: %s: %q is not host:port", settingSentinels, s))
			}
		}
	}
	return errs
}

// Describe names the Redis for logs, never a password: "host:port db N" for an address or URL
// (addr is the embedded server's address when none is configured: "embedded host:port db 0"),
// "sentinel master M via h1:p1,h2:p2 db N" for a Sentinel group; " tls" is added for TLS.
func (r Redis) Describe(addr string) string {
	db, tls := r.DB, r.TLS
	switch {
	case r.Sentinel():
		addr = "sentinel master " + r.SentinelMaster + " via " + strings.Join(r.Sentinels, ",")
	case r.URL != "":
		if u, err := r.ParseURL(); err == nil {
			addr = u.Addr
			if u.DB >= 0 {
				db = u.DB
			}
			tls = tls || u.TLS
		}
	}
	s := fmt.Sprintf("%s db %d", addr, db)
	if r.Embedded() {
		s = "embedded " + s
	}
	if tls {
		s += " tls"
	}
	return s
}
