package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTiles: the api's tile caches default to 16 MiB each (32 MiB of bundle indexes), are read from YAML and from
// MAPFARM_TILE_*_BYTES, keep a negative size (off), and refuse a size that is not a number.
func TestTiles(t *testing.T) {
	c := mustLoad(t, "")
	if want := (Tiles{MemoryBytes: 16 << 20, IndexBytes: 32 << 20, PageBytes: 16 << 20, RecentBytes: 16 << 20}); c.Tiles != want {
		t.Errorf("defaults %+v, want %+v", c.Tiles, want)
	}
	path := filepath.Join(t.TempDir(), "mapfarm.yaml")
	if err := os.WriteFile(path, []byte("tiles:\n  memoryBytes: -1\n  indexBytes: 1048576\n  pageBytes: 2097152\n  recentBytes: 4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = mustLoad(t, path)
	if want := (Tiles{MemoryBytes: -1, IndexBytes: 1 << 20, PageBytes: 2 << 20, RecentBytes: 4096}); c.Tiles != want {
		t.Errorf("from YAML %+v, want %+v", c.Tiles, want)
	}
	t.Setenv("MAPFARM_TILE_MEMORY_BYTES", "1000")
	t.Setenv("MAPFARM_TILE_INDEX_BYTES", "-1")
	t.Setenv("MAPFARM_TILE_PAGE_BYTES", "-1")
	t.Setenv("MAPFARM_RECENT_OUTPUT_BYTES", "-1")
	c = mustLoad(t, path)
	if want := (Tiles{MemoryBytes: 1000, IndexBytes: -1, PageBytes: -1, RecentBytes: -1}); c.Tiles != want {
		t.Errorf("from the environment %+v, want %+v", c.Tiles, want)
	}
	t.Setenv("MAPFARM_TILE_PAGE_BYTES", "64MiB")
	if _, err := Load(""); err == nil {
		t.Error("MAPFARM_TILE_PAGE_BYTES=64MiB was accepted")
	}
}

// TestWorkerQueues: workers take both queues by default; MAPFARM_WORKER_QUEUES names them
// (comma-separated), and a name that is no queue is refused.
func TestWorkerQueues(t *testing.T) {
	c := mustLoad(t, "")
	if len(c.Worker.Queues) != 0 {
		t.Errorf("default queues %q, want none named (all)", c.Worker.Queues)
	}
	t.Setenv("MAPFARM_WORKER_QUEUES", " seed ,")
	c = mustLoad(t, "")
	if len(c.Worker.Queues) != 1 || c.Worker.Queues[0] != "seed" {
		t.Errorf("queues %q, want [seed]", c.Worker.Queues)
	}
	t.Setenv("MAPFARM_WORKER_QUEUES", "interactive,bulk")
	if _, err := Load(""); err == nil {
		t.Error("queue bulk was accepted")
	}
}

// TestWorkerPollInterval: idle workers poll every millisecond unless MAPFARM_WORKER_POLL_INTERVAL
// says otherwise; a value that is no duration is refused.
func TestWorkerPollInterval(t *testing.T) {
	c := mustLoad(t, "")
	if c.Worker.PollInterval != time.Millisecond {
		t.Errorf("default poll interval %s, want 1ms", c.Worker.PollInterval)
	}
	t.Setenv("MAPFARM_WORKER_POLL_INTERVAL", "25ms")
	c = mustLoad(t, "")
	if c.Worker.PollInterval != 25*time.Millisecond {
		t.Errorf("poll interval %s, want 25ms", c.Worker.PollInterval)
	}
	t.Setenv("MAPFARM_WORKER_POLL_INTERVAL", "25")
	if _, err := Load(""); err == nil {
		t.Error("MAPFARM_WORKER_POLL_INTERVAL=25 (no unit) was accepted")
	}
}

// TestWorkerHeavyLane: the heavy lane's threshold, slots and memory release have defaults and
// their variables; "heavy" is a queue a worker may be given.
func TestWorkerHeavyLane(t *testing.T) {
	t.Setenv("MAPFARM_WORKER_CONCURRENCY", "4")
	c := mustLoad(t, "")
	if c.Worker.HeavyPixels != 2048*2048 || c.Worker.HeavySlots != 2 || c.Worker.ReleaseMemoryEvery != 0 {
		t.Errorf("defaults: heavy pixels %d, heavy slots %d, release every %s; want 4194304, 2 (half of 4), 0 (when going to sleep only)",
			c.Worker.HeavyPixels, c.Worker.HeavySlots, c.Worker.ReleaseMemoryEvery)
	}
	t.Setenv("MAPFARM_WORKER_HEAVY_PIXELS", "1000000")
	t.Setenv("MAPFARM_WORKER_HEAVY_SLOTS", "3")
	t.Setenv("MAPFARM_WORKER_RELEASE_MEMORY_EVERY", "-1s")
	t.Setenv("MAPFARM_WORKER_QUEUES", "heavy")
	c = mustLoad(t, "")
	if c.Worker.HeavyPixels != 1e6 || c.Worker.HeavySlots != 3 || c.Worker.ReleaseMemoryEvery != -time.Second || len(c.Worker.Queues) != 1 {
		t.Errorf("from the environment: %+v", c.Worker)
	}
	t.Setenv("MAPFARM_WORKER_HEAVY_PIXELS", "4M")
	if _, err := Load(""); err == nil {
		t.Error("MAPFARM_WORKER_HEAVY_PIXELS=4M was accepted")
	}
}
