package redisconn

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// TestOptions: each way of naming Redis becomes the asynq option type for it, with every field.
func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Redis
		want asynq.RedisConnOpt
		tls  string // the TLS server name, "-" for no TLS
	}{
		{"address", config.Redis{Addr: "r:6379", DB: 2, Password: "pw", Username: "farm"},
			asynq.RedisClientOpt{Addr: "r:6379", DB: 2, Password: "pw", Username: "farm", PoolSize: PoolSize}, "-"},
		{"embedded", config.Redis{},
			asynq.RedisClientOpt{Addr: "127.0.0.1:5555", PoolSize: PoolSize}, "-"},
		{"url", config.Redis{URL: "redis://farm:url-pw@r.example/3"},
			asynq.RedisClientOpt{Addr: "r.example:6379", DB: 3, Username: "farm", Password: "url-pw", PoolSize: PoolSize}, "-"},
		{"url without password or db", config.Redis{URL: "redis://r.example:6380", Password: "env-pw", DB: 4},
			asynq.RedisClientOpt{Addr: "r.example:6380", DB: 4, Password: "env-pw", PoolSize: PoolSize}, "-"},
		{"rediss", config.Redis{URL: "rediss://r.example:6380/1"},
			asynq.RedisClientOpt{Addr: "r.example:6380", DB: 1, PoolSize: PoolSize}, "r.example"},
		{"address with TLS", config.Redis{Addr: "r:6380", TLS: true},
			asynq.RedisClientOpt{Addr: "r:6380", PoolSize: PoolSize}, ""},
		{"sentinel", config.Redis{SentinelMaster: "mymaster", Sentinels: []string{"s1:26379", "s2:26379"}, SentinelPassword: "spw",
			Password: "pw", Username: "farm", DB: 1},
			asynq.RedisFailoverClientOpt{MasterName: "mymaster", SentinelAddrs: []string{"s1:26379", "s2:26379"}, SentinelPassword: "spw",
				Password: "pw", Username: "farm", DB: 1, PoolSize: PoolSize}, "-"},
		{"sentinel with TLS", config.Redis{SentinelMaster: "m", Sentinels: []string{"s1:26379"}, TLS: true},
			asynq.RedisFailoverClientOpt{MasterName: "m", SentinelAddrs: []string{"s1:26379"}, PoolSize: PoolSize}, ""},
	}
	for _, tc := range tests {
		got, err := Options(tc.cfg, "127.0.0.1:5555")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		// Compare without the TLS configs, checked apart.
		var tlsName *string
		switch o := got.(type) {
		case asynq.RedisClientOpt:
			if o.TLSConfig != nil {
				tlsName = &o.TLSConfig.ServerName
				if o.TLSConfig.MinVersion < 0x0303 {
					t.Errorf("%s: TLS below 1.2", tc.name)
				}
			}
			o.TLSConfig = nil
			got = o
		case asynq.RedisFailoverClientOpt:
			if o.TLSConfig != nil {
				tlsName = &o.TLSConfig.ServerName
			}
			o.TLSConfig = nil
			got = o
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.name, got, tc.want)
		}
		switch {
		case tc.tls == "-" && tlsName != nil:
			t.Errorf("%s: TLS on", tc.name)
		case tc.tls != "-" && tlsName == nil:
			t.Errorf("%s: TLS off", tc.name)
		case tc.tls != "-" && *tlsName != tc.tls:
			t.Errorf("%s: TLS server name %q, want %q", tc.name, *tlsName, tc.tls)
		}
	}
}

// TestCAFile: a CA file becomes the TLS roots; a missing or empty one is an error naming the
// setting.
func TestCAFile(t *testing.T) {
	dir := t.TempDir()
	ca := testenv.TLS(t).CA
	opt, err := Options(config.Redis{URL: "rediss://r:6380", CAFile: ca}, "")
	if err != nil {
		t.Fatal(err)
	}
	tc := opt.(asynq.RedisClientOpt).TLSConfig
	if tc == nil || tc.RootCAs == nil || tc.ServerName != "r" {
		t.Fatalf("TLS config %+v, want the CA file's roots and server name r", tc)
	}
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("not a certificate"), 0o644)
	for _, f := range []string{filepath.Join(dir, "missing.pem"), empty} {
		_, err := Options(config.Redis{SentinelMaster: "m", Sentinels: []string{"s:26379"}, TLS: true, CAFile: f}, "")
		if err == nil || !strings.Contains(err.Error(), "redis.caFile (MAPFARM_REDIS_CA_FILE)") || !strings.Contains(err.Error(), f) {
			t.Errorf("CA file %s: %v, want an error naming the setting and the file", f, err)
		}
	}
}

// TestNewConnects: the client from a URL reaches the test Redis and selects the URL's database.
func TestNewConnects(t *testing.T) {
	addr, db := testenv.Redis(t), testenv.RedisDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := New(config.Redis{URL: fmt.Sprintf("redis://%s/%d", addr, db)}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := "mapfarm:redisconn-test:" + t.Name()
	if err := c.Set(ctx, key, "x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	// Seen in that database through a plain client, not in another.
	plain := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer plain.Close()
	if v, err := plain.Get(ctx, key).Result(); err != nil || v != "x" {
		t.Errorf("in db %d: %q, %v", db, v, err)
	}
	plain.Del(ctx, key)
	if got := c.(*redis.Client).Options().PoolSize; got != PoolSize {
		t.Errorf("pool size %d, want %d", got, PoolSize)
	}
}

// TestTLS runs a redis-server of the test's own that speaks TLS only, with a certificate from a
// CA made for the test: a rediss:// URL or an address with TLS reaches it given the CA file, and
// without the CA file the connection is refused for the unknown authority.
func TestTLS(t *testing.T) {
	bin := testenv.RedisServerBinary(t)
	files := testenv.TLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", "0", "--tls-port", port, "--tls-cert-file", files.Cert,
		"--tls-key-file", files.Key, "--tls-ca-cert-file", files.CA, "--tls-auth-clients", "no", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	testenv.StartServer(t, "redis-server", cmd)
	ping := func(cfg config.Redis) error {
		c, err := New(cfg, "")
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	}
	url := config.Redis{URL: "rediss://" + addr + "/0", CAFile: files.CA}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := ping(url)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rediss:// with the CA file: %v", err)
		}
	}
	if err := ping(config.Redis{Addr: addr, TLS: true, CAFile: files.CA}); err != nil {
		t.Errorf("address with TLS and the CA file: %v", err)
	}
	if err := ping(config.Redis{URL: "rediss://localhost:" + port, CAFile: files.CA}); err != nil {
		t.Errorf("rediss://localhost with the CA file: %v", err)
	}
	err = ping(config.Redis{URL: "rediss://" + addr})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("rediss:// without the CA file: %v, want a certificate error", err)
	}
	if err := ping(config.Redis{Addr: addr}); err == nil {
		t.Error("plain connection to a TLS-only server answered")
	}
}
