package redisconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/redisconn"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// go-redis's lines become JSON records with a level and component=go-redis (issue 26: they were
// unstructured "redis: pool…" lines on stderr).
func TestLoggerWritesStructuredRecords(t *testing.T) {
	var buf bytes.Buffer
	l := redisconn.Logger{L: slog.New(slog.NewJSONHandler(&buf, nil))}
	l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v\n", 5, "connect: connection refused")
	l.Printf(context.Background(), "sentinel: new master=%q addr=%q", "mymaster", "127.0.0.1:6380")
	l.Printf(context.Background(), "sentinel: GetMasterAddrByName name=%q failed: %s", "mymaster", "i/o timeout")
	var recs []map[string]any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, buf.String())
		}
		recs = append(recs, m)
	}
	want := []struct{ level, msg string }{
		{"WARN", "redis: connection pool: failed to dial after 5 attempts: connect: connection refused"},
		{"INFO", `sentinel: new master="mymaster" addr="127.0.0.1:6380"`},
		{"WARN", `sentinel: GetMasterAddrByName name="mymaster" failed: i/o timeout`},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), buf.String())
	}
	for i, w := range want {
		if recs[i]["level"] != w.level || recs[i]["msg"] != w.msg || recs[i]["component"] != "go-redis" {
			t.Errorf("record %d: %v, want level %s msg %q component go-redis", i, recs[i], w.level, w.msg)
		}
	}
}

// Once routed, what go-redis itself logs (here a failover client asking a Sentinel that is not
// there for the primary, the "sentinel: …" line of a failover) arrives as a record. RouteLogs sets
// go-redis's process-wide logger: this test binary's, for good.
func TestRouteLogs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	var buf testenv.LogBuffer
	redisconn.RouteLogs(slog.New(slog.NewJSONHandler(&buf, nil)))
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{addr}, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Fatal("a ping through a Sentinel that is not there answered")
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace([]byte(buf.String())), []byte("\n"))
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("go-redis's line is not one JSON record: %v\n%q", err, buf.String())
	}
	if msg, _ := m["msg"].(string); m["component"] != "go-redis" || m["level"] != "WARN" ||
		!strings.Contains(msg, "sentinel: GetMasterAddrByName") || !strings.Contains(msg, addr) {
		t.Errorf("record %v, want a WARN of component go-redis about the Sentinel at %s", m, addr)
	}
}
