package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// The start attributes name the Redis and the store, never a password or a key.
func TestStartAttrs(t *testing.T) {
	tests := []struct {
		name  string
		cfg   config.Config
		addr  string
		redis string
		store string
	}{
		{"minio", config.Config{Redis: config.Redis{Addr: "10.0.0.5:6379", DB: 2, Password: "redis-pw"},
			Store: config.Store{Kind: "minio", MinIO: config.MinIO{Endpoint: "minio:9000", Bucket: "tiles", AccessKey: "access-key", SecretKey: "secret-key"}}},
			"10.0.0.5:6379", "10.0.0.5:6379 db 2", "minio http://minio:9000 bucket tiles"},
		{"minio over TLS", config.Config{Redis: config.Redis{Addr: "r:6379"},
			Store: config.Store{Kind: "minio", MinIO: config.MinIO{Endpoint: "s3.example:443", Bucket: "b", UseSSL: true}}},
			"r:6379", "r:6379 db 0", "minio https://s3.example:443 bucket b"},
		{"sentinel", config.Config{Redis: config.Redis{SentinelMaster: "mymaster", Sentinels: []string{"s1:26379", "s2:26379"}, Password: "redis-pw", SentinelPassword: "sentinel-pw"},
			Store: config.Store{Kind: "disk", Dir: "/var/lib/mapfarm"}},
			"", "sentinel master mymaster via s1:26379,s2:26379 db 0", "disk /var/lib/mapfarm"},
		{"url", config.Config{Redis: config.Redis{URL: "rediss://farm:redis-pw@r.example:6380/3"},
			Store: config.Store{Kind: "disk", Dir: "/var/lib/mapfarm"}},
			"", "r.example:6380 db 3 tls", "disk /var/lib/mapfarm"},
		{"embedded, disk", config.Config{Store: config.Store{Kind: "disk", Dir: "/var/lib/mapfarm"}},
			"127.0.0.1:41234", "embedded 127.0.0.1:41234 db 0", "disk /var/lib/mapfarm"},
	}
	for _, tc := range tests {
		attrs := StartAttrs(&tc.cfg, tc.addr)
		got := fmt.Sprint(attrs...)
		if len(attrs) != 4 || attrs[1] != tc.redis || attrs[3] != tc.store {
			t.Errorf("%s: %q, want redis %q and store %q", tc.name, attrs, tc.redis, tc.store)
		}
		for _, secret := range []string{"redis-pw", "sentinel-pw", "access-key", "secret-key"} {
			if strings.Contains(got, secret) {
				t.Errorf("%s: %q holds a secret", tc.name, got)
			}
		}
	}
}

// jsonLines returns the lines of s that are JSON objects, as decoded.
func jsonLines(s string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(s, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Each role's start line (api, worker, coordinator) names the Redis and the store it uses.
func TestStartLinesNameRedisAndStore(t *testing.T) {
	dir := t.TempDir()
	cfg := embeddedDefault(t, t.TempDir(), "MAPFARM_STORE_DIR", dir, "MAPFARM_METRICS_LISTEN", "")
	var logs testenv.LogBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, RoleServe, cfg, logger, Hooks{Listening: func(string, *catalog.Catalog) {}}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	want := map[string]bool{"api listening": false, "worker started": false, "coordinator started": false}
	deadline := time.Now().Add(20 * time.Second)
	for {
		found := 0
		for _, l := range jsonLines(logs.String()) {
			msg, _ := l["msg"].(string)
			if _, ok := want[msg]; !ok {
				continue
			}
			found++
			redis, _ := l["redis"].(string)
			if !strings.HasPrefix(redis, "embedded 127.0.0.1:") || !strings.HasSuffix(redis, " db 0") || l["store"] != "disk "+dir {
				t.Fatalf("%q: redis %q store %q, want the embedded Redis and disk %s", msg, l["redis"], l["store"], dir)
			}
		}
		if found == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("start lines missing after 20 s; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
