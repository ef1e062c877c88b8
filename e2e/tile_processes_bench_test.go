package e2e

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkGetMapTileProcesses is BenchmarkGetMapTile's default case (compact V2, warm index,
// served-tile memory and bundle pages on) on a farm of separate processes, as deployed: api,
// coordinator and one worker, each its own process, on real Redis and MinIO, with the 8 clients in
// the benchmark's process. BenchmarkGetMapTile runs the farm and its clients in one process, where
// a request never leaves it for another, so it reads higher.
//
//	go test ./e2e -run '^$' -bench GetMapTileProcesses -benchtime 10000x -count 3
func BenchmarkGetMapTileProcesses(b *testing.B) {
	bin := buildBinary(b, "github.com/mapfarm/mapfarm")
	addr := freePort(b)
	env := farmEnv(b, addr)
	startProcess(b, bin, "worker", append(env, "MAPFARM_WORKER_CONCURRENCY=2"))
	startProcess(b, bin, "coordinator", env)
	startProcess(b, bin, "api", env)
	base := "http://" + addr
	waitReady(b, base+"/readyz", 60*time.Second)
	benchGetMapTile(b, &farm{url: strings.TrimSuffix(base, "/")})
}
