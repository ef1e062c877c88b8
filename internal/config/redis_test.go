package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// clearRedisEnv unsets every Redis variable for the test, so that the caller's environment
// (scripts/test.sh sets none of these, a developer's shell might) does not leak in.
func clearRedisEnv(t *testing.T) {
	for _, k := range []string{"MAPFARM_REDIS_ADDR", "MAPFARM_REDIS_DB", "MAPFARM_REDIS_PASSWORD", "MAPFARM_REDIS_PASSWORD_FILE",
		"MAPFARM_REDIS_URL", "MAPFARM_REDIS_URL_FILE", "MAPFARM_REDIS_SENTINEL_MASTER", "MAPFARM_REDIS_SENTINELS",
		"MAPFARM_REDIS_SENTINEL_PASSWORD", "MAPFARM_REDIS_SENTINEL_PASSWORD_FILE", "MAPFARM_REDIS_USERNAME", "MAPFARM_REDIS_TLS",
		"MAPFARM_REDIS_CA_FILE", "MAPFARM_MINIO_USE_SSL", "MAPFARM_MINIO_CA_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestRedisURL: a URL gives the address (port 6379 by default), user, password, database and
// TLS; Describe names it without the password.
func TestRedisURL(t *testing.T) {
	tests := []struct {
		url  string
		want RedisURL
		desc string
	}{
		{"redis://cache.example:6380/2", RedisURL{Addr: "cache.example:6380", DB: 2}, "cache.example:6380 db 2"},
		{"redis://cache.example", RedisURL{Addr: "cache.example:6379", DB: -1}, "cache.example:6379 db 0"},
		{"rediss://farm:s3cret@10.0.0.7:6380/0", RedisURL{Addr: "10.0.0.7:6380", Username: "farm", Password: "s3cret", DB: 0, TLS: true}, "10.0.0.7:6380 db 0 tls"},
		{"rediss://:s3cret@[::1]:6379", RedisURL{Addr: "[::1]:6379", Password: "s3cret", DB: -1, TLS: true}, "[::1]:6379 db 0 tls"},
	}
	for _, tc := range tests {
		r := Redis{URL: tc.url}
		got, err := r.ParseURL()
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.url, got, tc.want)
		}
		if errs := r.validate(); len(errs) != 0 {
			t.Errorf("%s: %v", tc.url, errs)
		}
		if d := r.Describe(""); d != tc.desc {
			t.Errorf("%s: Describe %q, want %q", tc.url, d, tc.desc)
		}
		if r.Embedded() {
			t.Errorf("%s: Embedded", tc.url)
		}
	}
}

// TestRedisFromEnv: every Redis variable lands in its field; the URL and the sentinel password
// also come from files; lists are trimmed.
func TestRedisFromEnv(t *testing.T) {
	clearRedisEnv(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "sentinel-pw")
	if err := os.WriteFile(pw, []byte("sentinel-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAPFARM_REDIS_SENTINEL_MASTER", "mymaster")
	t.Setenv("MAPFARM_REDIS_SENTINELS", " 10.0.0.1:26379, 10.0.0.2:26379 ,,10.0.0.3:26379")
	t.Setenv("MAPFARM_REDIS_SENTINEL_PASSWORD_FILE", pw)
	t.Setenv("MAPFARM_REDIS_PASSWORD", "redis-secret")
	t.Setenv("MAPFARM_REDIS_USERNAME", "farm")
	t.Setenv("MAPFARM_REDIS_TLS", "true")
	t.Setenv("MAPFARM_REDIS_DB", "3")
	c := mustLoad(t, "")
	want := Redis{DB: 3, Password: "redis-secret", SentinelMaster: "mymaster",
		Sentinels:        []string{"10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"},
		SentinelPassword: "sentinel-secret", Username: "farm", TLS: true}
	if !equalRedis(c.Redis, want) {
		t.Errorf("got %+v, want %+v", c.Redis, want)
	}
	if d := c.Redis.Describe(""); d != "sentinel master mymaster via 10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379 db 3 tls" {
		t.Errorf("Describe %q", d)
	}
	if !c.Redis.Sentinel() || c.Redis.Embedded() {
		t.Errorf("Sentinel %v, Embedded %v", c.Redis.Sentinel(), c.Redis.Embedded())
	}
	// Set but empty is unset, as for the other settings.
	t.Setenv("MAPFARM_REDIS_TLS", "")
	t.Setenv("MAPFARM_MINIO_USE_SSL", "")
	c = mustLoad(t, "")
	if c.Redis.TLS || c.Store.MinIO.UseSSL {
		t.Errorf("empty MAPFARM_REDIS_TLS, MAPFARM_MINIO_USE_SSL: TLS %v, useSSL %v", c.Redis.TLS, c.Store.MinIO.UseSSL)
	}

	clearRedisEnv(t)
	urlFile := filepath.Join(dir, "url")
	if err := os.WriteFile(urlFile, []byte("rediss://u:url-secret@r.example:6380/4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAPFARM_REDIS_URL_FILE", urlFile)
	c = mustLoad(t, "")
	if c.Redis.URL != "rediss://u:url-secret@r.example:6380/4" {
		t.Errorf("URL from file: %q", c.Redis.URL)
	}
	if d := c.Redis.Describe(""); d != "r.example:6380 db 4 tls" || strings.Contains(d, "secret") {
		t.Errorf("Describe %q", d)
	}
}

func equalRedis(a, b Redis) bool {
	return slices.Equal(a.Sentinels, b.Sentinels) && reflect.DeepEqual(withoutSentinels(a), withoutSentinels(b))
}

func withoutSentinels(r Redis) Redis {
	r.Sentinels = nil
	return r
}

// TestRedisYAML: the Redis keys are read from the file; a password in the file's URL is refused.
func TestRedisYAML(t *testing.T) {
	clearRedisEnv(t)
	path := filepath.Join(t.TempDir(), "mapfarm.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("redis:\n  sentinelMaster: mymaster\n  sentinels: [s1:26379, s2:26379, s3:26379]\n  username: farm\n  tls: true\n  caFile: /etc/ssl/redis-ca.pem\n")
	c := mustLoad(t, path)
	want := Redis{SentinelMaster: "mymaster", Sentinels: []string{"s1:26379", "s2:26379", "s3:26379"}, Username: "farm", TLS: true, CAFile: "/etc/ssl/redis-ca.pem"}
	if !equalRedis(c.Redis, want) {
		t.Errorf("got %+v, want %+v", c.Redis, want)
	}
	write("redis:\n  url: rediss://r.example:6380/1\n")
	c = mustLoad(t, path)
	if c.Redis.URL != "rediss://r.example:6380/1" {
		t.Errorf("url from YAML: %q", c.Redis.URL)
	}
	write("redis:\n  url: redis://farm:in-the-file@r.example:6379\n")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "redis.url holds a password") || strings.Contains(err.Error(), "in-the-file") {
		t.Errorf("a password in the file's URL: %v", err)
	}
	// The same URL from the environment is fine.
	t.Setenv("MAPFARM_REDIS_URL", "redis://farm:from-env@r.example:6379")
	write("logLevel: info\n")
	c = mustLoad(t, path)
	if c.Redis.URL != "redis://farm:from-env@r.example:6379" {
		t.Errorf("URL with a password from the environment: %q", c.Redis.URL)
	}
}

// TestRedisErrors: each bad setting is refused with an error that names it, and no error
// quotes a password.
func TestRedisErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"addr and url", map[string]string{"MAPFARM_REDIS_ADDR": "r:6379", "MAPFARM_REDIS_URL": "redis://r:6379"},
			[]string{"redis.addr (MAPFARM_REDIS_ADDR), redis.url (MAPFARM_REDIS_URL) are alternatives; set one"}},
		{"addr and sentinel", map[string]string{"MAPFARM_REDIS_ADDR": "r:6379", "MAPFARM_REDIS_SENTINEL_MASTER": "m", "MAPFARM_REDIS_SENTINELS": "s:26379"},
			[]string{"redis.addr (MAPFARM_REDIS_ADDR), Sentinel (redis.sentinelMaster (MAPFARM_REDIS_SENTINEL_MASTER) and redis.sentinels (MAPFARM_REDIS_SENTINELS)) are alternatives"}},
		{"scheme", map[string]string{"MAPFARM_REDIS_URL": "http://u:pw-secret@r:6379"},
			[]string{`redis.url (MAPFARM_REDIS_URL): scheme "http" is neither redis:// nor rediss://`}},
		{"sentinel scheme", map[string]string{"MAPFARM_REDIS_URL": "redis-sentinel://s:26379?master=m"},
			[]string{`scheme "redis-sentinel" is neither redis:// nor rediss:// (for Sentinel set redis.sentinelMaster and redis.sentinels)`}},
		{"not a URL", map[string]string{"MAPFARM_REDIS_URL": "redis://u:pw-secret@r:6379/%zz"},
			[]string{"redis.url (MAPFARM_REDIS_URL): not a URL"}},
		{"bare host:port", map[string]string{"MAPFARM_REDIS_URL": "r.example:6379"},
			[]string{"redis.url (MAPFARM_REDIS_URL): no scheme", "a bare host:port goes in redis.addr"}},
		{"no host", map[string]string{"MAPFARM_REDIS_URL": "redis:///2"},
			[]string{"redis.url (MAPFARM_REDIS_URL): no host"}},
		{"port", map[string]string{"MAPFARM_REDIS_URL": "redis://r:99999"},
			[]string{`redis.url (MAPFARM_REDIS_URL): port "99999" is not a port number`}},
		{"db path", map[string]string{"MAPFARM_REDIS_URL": "redis://u:pw-secret@r:6379/cache"},
			[]string{`redis.url (MAPFARM_REDIS_URL): the path "/cache" is not a database number`}},
		{"query", map[string]string{"MAPFARM_REDIS_URL": "redis://r:6379/0?dial_timeout=3s"},
			[]string{"redis.url (MAPFARM_REDIS_URL): query parameters and fragments are not supported"}},
		{"two dbs", map[string]string{"MAPFARM_REDIS_URL": "redis://r:6379/2", "MAPFARM_REDIS_DB": "3"},
			[]string{"redis.url (MAPFARM_REDIS_URL) names database 2 but redis.db (MAPFARM_REDIS_DB) is 3; set one"}},
		{"negative db", map[string]string{"MAPFARM_REDIS_ADDR": "r:6379", "MAPFARM_REDIS_DB": "-1"},
			[]string{"redis.db (MAPFARM_REDIS_DB) is -1"}},
		{"master without sentinels", map[string]string{"MAPFARM_REDIS_SENTINEL_MASTER": "m"},
			[]string{"redis.sentinelMaster (MAPFARM_REDIS_SENTINEL_MASTER) is set but redis.sentinels (MAPFARM_REDIS_SENTINELS) is not"}},
		{"sentinels without master", map[string]string{"MAPFARM_REDIS_SENTINELS": "s1:26379,s2:26379"},
			[]string{"redis.sentinels (MAPFARM_REDIS_SENTINELS) is set but redis.sentinelMaster (MAPFARM_REDIS_SENTINEL_MASTER) is not"}},
		{"sentinel address", map[string]string{"MAPFARM_REDIS_SENTINEL_MASTER": "m", "MAPFARM_REDIS_SENTINELS": "s1:26379,s2,:26379,s3:port"},
			[]string{`redis.sentinels (MAPFARM_REDIS_SENTINELS): "s2" is not host:port`, `":26379" is not host:port`, `"s3:port" is not host:port`}},
		{"tls", map[string]string{"MAPFARM_REDIS_ADDR": "r:6379", "MAPFARM_REDIS_TLS": "yes please"},
			[]string{`MAPFARM_REDIS_TLS="yes please" is neither true nor false`}},
		{"url file", map[string]string{"MAPFARM_REDIS_URL_FILE": "/nonexistent/redis-url"},
			[]string{"MAPFARM_REDIS_URL_FILE", "/nonexistent/redis-url"}},
		{"minio useSSL", map[string]string{"MAPFARM_MINIO_USE_SSL": "ture"},
			[]string{`MAPFARM_MINIO_USE_SSL="ture" is neither true nor false`}},
		{"minio CA without TLS", map[string]string{"MAPFARM_STORE": "minio", "MAPFARM_MINIO_ENDPOINT": "m:9000", "MAPFARM_MINIO_ACCESS_KEY": "a",
			"MAPFARM_MINIO_SECRET_KEY": "b", "MAPFARM_MINIO_CA_FILE": "/etc/ca.pem"},
			[]string{"store.minio.caFile (MAPFARM_MINIO_CA_FILE) is set but the endpoint is plain http"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearRedisEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := Load("")
			if err == nil {
				t.Fatalf("accepted; want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "pw-secret") {
				t.Errorf("error %q quotes the password", err)
			}
		})
	}
}

// TestRedisDefaults: with nothing set, the embedded server; an address alone works as before.
func TestRedisDefaults(t *testing.T) {
	clearRedisEnv(t)
	c := mustLoad(t, "")
	if !c.Redis.Embedded() || c.Redis.Sentinel() {
		t.Errorf("no Redis configured: Embedded %v, Sentinel %v", c.Redis.Embedded(), c.Redis.Sentinel())
	}
	if d := c.Redis.Describe("127.0.0.1:4000"); d != "embedded 127.0.0.1:4000 db 0" {
		t.Errorf("Describe %q", d)
	}
	t.Setenv("MAPFARM_REDIS_ADDR", "redis:6379")
	t.Setenv("MAPFARM_REDIS_DB", "5")
	t.Setenv("MAPFARM_REDIS_PASSWORD", "pw")
	c = mustLoad(t, "")
	if want := (Redis{Addr: "redis:6379", DB: 5, Password: "pw"}); !equalRedis(c.Redis, want) {
		t.Errorf("got %+v, want %+v", c.Redis, want)
	}
	if d := c.Redis.Describe(c.Redis.Addr); d != "redis:6379 db 5" {
		t.Errorf("Describe %q", d)
	}
}
