package app

import (
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/mvt"
)

// An api process gets the configured soft memory limit; other roles, a non-positive limit and
// a GOMEMLIMIT of the operator's leave the runtime's limit alone.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	for _, role := range []string{RoleServe, RoleWorker, RoleCoordinator} {
		if got := applyMemoryLimit(role, 180<<20, logger); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("role %s: limit %d set", role, debug.SetMemoryLimit(-1))
		}
	}
	if got := applyMemoryLimit(RoleAPI, -1, logger); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("a negative limit set %d", debug.SetMemoryLimit(-1))
	}
	if got := applyMemoryLimit(RoleAPI, 180<<20, logger); got != 180<<20 || debug.SetMemoryLimit(-1) != 180<<20 {
		t.Errorf("api: limit %d, want %d", debug.SetMemoryLimit(-1), 180<<20)
	}
	debug.SetMemoryLimit(1 << 30) // as GOMEMLIMIT=1GiB would have set it at start
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := applyMemoryLimit(RoleAPI, 180<<20, logger); got != 1<<30 || debug.SetMemoryLimit(-1) != 1<<30 {
		t.Errorf("with GOMEMLIMIT: limit %d, want the operator's %d", debug.SetMemoryLimit(-1), 1<<30)
	}
}

// Every configured limit's value is published in mapfarm_limit{limit}.
func TestReportLimits(t *testing.T) {
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	reportLimits(m, cfg.Limits)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`mapfarm_limit{limit="maxVertices"} 100000`,
		`mapfarm_limit{limit="maxDecodedBytes"} 1.048576e+07`,
		`mapfarm_limit{limit="maxImageDPI"} 2400`,
		`mapfarm_limit{limit="maxBodyBytes"} 8.388608e+06`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestVectorTileOptions: the vector tiles' limits come from the configuration, whose defaults
// are the encoder's own, and every tile is gzipped.
func TestVectorTileOptions(t *testing.T) {
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	o := vectorTileOptions(cfg.Limits)
	if !o.Gzip || o.MaxFeatures != mvt.DefaultMaxFeatures || o.MaxBytes != mvt.DefaultMaxBytes || o.Timeout != mvt.DefaultTimeout {
		t.Errorf("default options %+v, want gzip and the encoder's defaults", o)
	}
	t.Setenv("MAPFARM_VECTOR_TILE_MAX_FEATURES", "12")
	if cfg, err = config.Load(""); err != nil {
		t.Fatal(err)
	}
	if o := vectorTileOptions(cfg.Limits); o.MaxFeatures != 12 {
		t.Errorf("MAPFARM_VECTOR_TILE_MAX_FEATURES=12 gives %d features", o.MaxFeatures)
	}
}
