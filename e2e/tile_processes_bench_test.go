package e2e

import "testing"

// BenchmarkGetMapTileProcesses is BenchmarkGetMapTile's default case (compact V2, warm index,
// served-tile memory and bundle pages on) on a farm of separate processes, as deployed: api,
// coordinator and one worker, each its own process, on real Redis and MinIO, with the 8 clients in
// the benchmark's process. BenchmarkGetMapTile runs the farm and its clients in one process, where
// a request never leaves it for another, so it reads higher.
//
//	go test ./e2e -run '^$' -bench GetMapTileProcesses -benchtime 10000x -count 3
func BenchmarkGetMapTileProcesses(b *testing.B) {
	f := startProcessFarm(b, []string{"MAPFARM_WORKER_CONCURRENCY=2"}, "worker", "coordinator", "api")
	benchGetMapTile(b, &farm{url: f.base})
}
