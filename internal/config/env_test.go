package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEnvironment: one variable of each kind in the table reaches its field through Load (text,
// trimmed text, numbers, durations, booleans, lists, secrets from the variable or its file),
// and every value that does not parse is reported, all at once, by name.
func TestEnvironment(t *testing.T) {
	clearRedisEnv(t)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("  minio-secret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"MAPFARM_LISTEN":                "127.0.0.1:9999",
		"MAPFARM_REDIS_SENTINEL_MASTER": "  mymaster ",
		"MAPFARM_REDIS_SENTINELS":       "a:1, b:2,,",
		"MAPFARM_REDIS_DB":              "3",
		"MAPFARM_MAX_BODY_BYTES":        "1048576",
		"MAPFARM_MAX_IMAGE_DPI":         "300",
		"MAPFARM_RATE_LIMIT":            "2.5",
		"MAPFARM_WORKER_IDLE_AFTER":     "-1s",
		"MAPFARM_MINIO_USE_SSL":         "true",
		"MAPFARM_REDIS_TLS":             "", // empty: left alone
		"MAPFARM_STORE":                 "minio",
		"MAPFARM_MINIO_ENDPOINT":        "minio.example:9000",
		"MAPFARM_MINIO_ACCESS_KEY":      "minio-access",
		"MAPFARM_MINIO_SECRET_KEY_FILE": secretFile,
	} {
		t.Setenv(k, v)
	}
	c := mustLoad(t, "")
	if c.Listen != "127.0.0.1:9999" || c.Redis.SentinelMaster != "mymaster" || !slices.Equal(c.Redis.Sentinels, []string{"a:1", "b:2"}) ||
		c.Redis.DB != 3 || c.Limits.MaxBodyBytes != 1<<20 || c.Limits.MaxImageDPI != 300 || c.Security.RateLimit != 2.5 ||
		c.Worker.IdleAfter != -time.Second || !c.Store.MinIO.UseSSL || c.Redis.TLS ||
		c.Store.MinIO.AccessKey != "minio-access" || c.Store.MinIO.SecretKey != "minio-secret-from-file" {
		t.Errorf("from the environment: listen %q, sentinel %q %q, db %d, body %d, dpi %g, rate %g, idle %v, ssl %v, tls %v, keys %q %q",
			c.Listen, c.Redis.SentinelMaster, c.Redis.Sentinels, c.Redis.DB, c.Limits.MaxBodyBytes, c.Limits.MaxImageDPI,
			c.Security.RateLimit, c.Worker.IdleAfter, c.Store.MinIO.UseSSL, c.Redis.TLS, c.Store.MinIO.AccessKey, c.Store.MinIO.SecretKey)
	}

	t.Setenv("MAPFARM_REDIS_DB", "three")
	t.Setenv("MAPFARM_TILE_PAGE_BYTES", "1MB")
	t.Setenv("MAPFARM_RATE_LIMIT", "-1")
	t.Setenv("MAPFARM_WORKER_IDLE_AFTER", "2")
	t.Setenv("MAPFARM_MINIO_USE_SSL", "maybe")
	t.Setenv("MAPFARM_TOKEN_SECRET_FILE", filepath.Join(t.TempDir(), "missing"))
	_, err := Load("")
	if err == nil {
		t.Fatal("bad values were accepted")
	}
	for _, want := range []string{
		`config: MAPFARM_REDIS_DB="three" is not a number`,
		`config: MAPFARM_TILE_PAGE_BYTES="1MB" is not a number`,
		`config: MAPFARM_RATE_LIMIT="-1" is not a non-negative number`,
		`config: MAPFARM_WORKER_IDLE_AFTER="2" is not a duration`,
		`config: MAPFARM_MINIO_USE_SSL="maybe" is neither true nor false`,
		`config: MAPFARM_TOKEN_SECRET_FILE: open `,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}
