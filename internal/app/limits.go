package app

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// codecLimits are the configured limits of the SOAP reader.
func codecLimits(l config.Limits) soap.Limits {
	return soap.Limits{MaxDepth: l.MaxDepth, MaxElements: l.MaxElements, MaxDecodedBytes: l.MaxDecodedBytes}
}

// vectorTileOptions are the encoder's options of every vector tile the farm makes, on demand
// (the VectorTileServer, the OGC API's vector tilesets) or seeded (the worker): the configured
// limits, and gzip, stored once and served with Content-Encoding.
func vectorTileOptions(l config.Limits) mvt.Options {
	return mvt.Options{Gzip: true, MaxFeatures: l.VectorTileMaxFeatures, MaxBytes: l.VectorTileMaxBytes, Timeout: l.VectorTileTimeout}
}

// requestLimits are the configured limits of a decoded request.
func requestLimits(l config.Limits) limits.Request {
	return limits.Request{MaxVertices: l.MaxVertices, MaxIDs: l.MaxIDs, MaxStringBytes: l.MaxStringBytes,
		MaxImageWidth: l.MaxImageWidth, MaxImageHeight: l.MaxImageHeight, MaxImageDPI: l.MaxImageDPI}
}

// reportLimits publishes the configured value of each limit in mapfarm_limit{limit}.
func reportLimits(m *metrics.Metrics, l config.Limits) {
	for name, v := range map[limits.Name]float64{
		limits.BodyBytes: float64(l.MaxBodyBytes), limits.Elements: float64(l.MaxElements), limits.Depth: float64(l.MaxDepth),
		limits.DecodedBytes: float64(l.MaxDecodedBytes), limits.ImageWidth: float64(l.MaxImageWidth),
		limits.ImageHeight: float64(l.MaxImageHeight), limits.ImageDPI: l.MaxImageDPI, limits.Vertices: float64(l.MaxVertices),
		limits.Points: float64(l.MaxPoints), limits.IDs: float64(l.MaxIDs), limits.StringBytes: float64(l.MaxStringBytes),
	} {
		m.Limit.WithLabelValues(string(name)).Set(v)
	}
}

// applyMemoryLimit sets the Go runtime's soft memory limit of an api process to limit bytes
// (config limits.apiMemoryLimit), unless GOMEMLIMIT is set (the runtime has applied it) or
// limit is not positive. Only the api role gets it: a process that renders (serve, worker)
// needs memory in proportion to its render slots, not a fixed bound. It returns the limit in
// force, or 0.
func applyMemoryLimit(role string, limit int64, logger *slog.Logger) int64 {
	if role != RoleAPI || limit <= 0 {
		return 0
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1) // reads the limit without changing it
	}
	debug.SetMemoryLimit(limit)
	logger.Info("memory limit set", "bytes", limit)
	return limit
}
