package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// envBinding ties one environment variable to the field it sets and to how its text is read.
type envBinding struct {
	// name is the variable, MAPFARM_….
	name string
	// secret variables may instead name a file holding the value, in name_FILE; an empty
	// value counts as unset.
	secret bool
	// set parses the value into the field; its error says what the value is not.
	set func(v string) error
}

// envBindings is every environment variable Load reads, with the field each one sets: the
// one table of the environment, in the order the fields are documented.
func (c *Config) envBindings() []envBinding {
	l, r, w, minio, s := &c.Limits, &c.Redis, &c.Worker, &c.Store.MinIO, &c.Security
	return []envBinding{
		{name: "MAPFARM_LISTEN", set: text(&c.Listen)},
		{name: "MAPFARM_PUBLIC_URL", set: text(&c.PublicURL)},
		{name: "MAPFARM_NAMESPACE", set: text(&c.Namespace)},
		{name: "MAPFARM_SERVICES", set: text(&c.Services)},
		{name: "MAPFARM_METRICS_LISTEN", set: text(&c.MetricsListen)},
		{name: "MAPFARM_STATE_DIR", set: text(&c.StateDir)},
		{name: "MAPFARM_LEGISLATIVE_RELOAD", set: duration(&c.LegislativeReload)},
		{name: "MAPFARM_REFRESH_FILE_POLL", set: duration(&c.RefreshFilePoll)},
		{name: "MAPFARM_LOG_LEVEL", set: text(&c.LogLevel)},

		{name: "MAPFARM_REDIS_ADDR", set: text(&r.Addr)},
		{name: "MAPFARM_REDIS_DB", set: number(&r.DB, strconv.Atoi)},
		{name: "MAPFARM_REDIS_PASSWORD", secret: true, set: text(&r.Password)},
		{name: "MAPFARM_REDIS_URL", secret: true, set: text(&r.URL)},
		{name: "MAPFARM_REDIS_SENTINEL_MASTER", set: trimmed(&r.SentinelMaster)},
		{name: "MAPFARM_REDIS_SENTINELS", set: list(&r.Sentinels)},
		{name: "MAPFARM_REDIS_SENTINEL_PASSWORD", secret: true, set: text(&r.SentinelPassword)},
		{name: "MAPFARM_REDIS_USERNAME", set: text(&r.Username)},
		{name: "MAPFARM_REDIS_TLS", set: flag(&r.TLS)},
		{name: "MAPFARM_REDIS_CA_FILE", set: text(&r.CAFile)},

		{name: "MAPFARM_STORE", set: text(&c.Store.Kind)},
		{name: "MAPFARM_STORE_DIR", set: text(&c.Store.Dir)},
		{name: "MAPFARM_MINIO_ENDPOINT", set: text(&minio.Endpoint)},
		{name: "MAPFARM_MINIO_BUCKET", set: text(&minio.Bucket)},
		{name: "MAPFARM_MINIO_ACCESS_KEY", secret: true, set: text(&minio.AccessKey)},
		{name: "MAPFARM_MINIO_SECRET_KEY", secret: true, set: text(&minio.SecretKey)},
		{name: "MAPFARM_MINIO_USE_SSL", set: flag(&minio.UseSSL)},
		{name: "MAPFARM_MINIO_CA_FILE", set: text(&minio.CAFile)},

		{name: "MAPFARM_MAX_BODY_BYTES", set: number(&l.MaxBodyBytes, parseInt64)},
		{name: "MAPFARM_MAX_IMAGE_WIDTH", set: number(&l.MaxImageWidth, strconv.Atoi)},
		{name: "MAPFARM_MAX_IMAGE_HEIGHT", set: number(&l.MaxImageHeight, strconv.Atoi)},
		{name: "MAPFARM_MAX_IMAGE_DPI", set: number(&l.MaxImageDPI, parseFloat)},
		{name: "MAPFARM_MAX_ELEMENTS", set: number(&l.MaxElements, strconv.Atoi)},
		{name: "MAPFARM_MAX_DEPTH", set: number(&l.MaxDepth, strconv.Atoi)},
		{name: "MAPFARM_MAX_VERTICES", set: number(&l.MaxVertices, strconv.Atoi)},
		{name: "MAPFARM_MAX_POINTS", set: number(&l.MaxPoints, strconv.Atoi)},
		{name: "MAPFARM_MAX_IDS", set: number(&l.MaxIDs, strconv.Atoi)},
		{name: "MAPFARM_MAX_STRING_BYTES", set: number(&l.MaxStringBytes, strconv.Atoi)},
		{name: "MAPFARM_MAX_DECODED_BYTES", set: number(&l.MaxDecodedBytes, parseInt64)},
		{name: "MAPFARM_MAX_RECORD_COUNT", set: number(&l.MaxRecordCount, strconv.Atoi)},
		{name: "MAPFARM_HEAVY_SLOTS", set: number(&l.HeavySlots, strconv.Atoi)},
		{name: "MAPFARM_VECTOR_TILE_MAX_FEATURES", set: number(&l.VectorTileMaxFeatures, strconv.Atoi)},
		{name: "MAPFARM_VECTOR_TILE_MAX_BYTES", set: number(&l.VectorTileMaxBytes, strconv.Atoi)},
		{name: "MAPFARM_VECTOR_TILE_TIMEOUT", set: duration(&l.VectorTileTimeout)},
		{name: "MAPFARM_API_MEMORY_LIMIT", set: number(&l.APIMemoryLimit, parseInt64)},
		{name: "MAPFARM_OPERATION_TIMEOUT", set: duration(&l.OperationTimeout)},

		{name: "MAPFARM_WORKER_CONCURRENCY", set: number(&w.Concurrency, strconv.Atoi)},
		{name: "MAPFARM_WORKER_HEAVY_SLOTS", set: number(&w.HeavySlots, strconv.Atoi)},
		{name: "MAPFARM_WORKER_HEAVY_PIXELS", set: number(&w.HeavyPixels, parseInt64)},
		{name: "MAPFARM_WORKER_QUEUES", set: list(&w.Queues)},
		{name: "MAPFARM_WORKER_POLL_INTERVAL", set: duration(&w.PollInterval)},
		{name: "MAPFARM_WORKER_IDLE_AFTER", set: duration(&w.IdleAfter)},
		{name: "MAPFARM_WORKER_RELEASE_MEMORY_EVERY", set: duration(&w.ReleaseMemoryEvery)},

		{name: "MAPFARM_TOKEN_SECRET", secret: true, set: text(&s.TokenSecret)},
		{name: "MAPFARM_ADMIN_TOKEN", secret: true, set: text(&s.AdminToken)},
		{name: "MAPFARM_RATE_LIMIT", set: nonNegative(&s.RateLimit)},
		{name: "MAPFARM_CORS_ORIGINS", set: list(&s.CORSOrigins)},
		{name: "MAPFARM_TRUSTED_PROXIES", set: list(&s.TrustedProxies)},
		{name: "MAPFARM_ADMIN_HOSTS", set: list(&s.AdminHosts)},

		{name: "MAPFARM_PICTURE_HOSTS", set: list(&c.Pictures.AllowedHosts)},

		{name: "MAPFARM_TILE_MEMORY_BYTES", set: number(&c.Tiles.MemoryBytes, parseInt64)},
		{name: "MAPFARM_TILE_INDEX_BYTES", set: number(&c.Tiles.IndexBytes, parseInt64)},
		{name: "MAPFARM_TILE_PAGE_BYTES", set: number(&c.Tiles.PageBytes, parseInt64)},
		{name: "MAPFARM_RECENT_OUTPUT_BYTES", set: number(&c.Tiles.RecentBytes, parseInt64)},
	}
}

// applyEnv sets every field whose variable is set, and reports every value that does not
// parse.
func (c *Config) applyEnv() error {
	var errs []error
	for _, b := range c.envBindings() {
		v, ok, err := b.lookup()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		if err := b.set(v); err != nil {
			errs = append(errs, fmt.Errorf("config: %s=%q %w", b.name, v, err))
		}
	}
	return errors.Join(errs...)
}

// lookup reads the binding's variable, or for a secret the file its _FILE variable names.
func (b envBinding) lookup() (string, bool, error) {
	if !b.secret {
		v, ok := os.LookupEnv(b.name)
		return v, ok, nil
	}
	if v := os.Getenv(b.name); v != "" {
		return v, true, nil
	}
	if f := os.Getenv(b.name + "_FILE"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", false, fmt.Errorf("config: %s_FILE: %w", b.name, err)
		}
		v := strings.TrimSpace(string(data))
		return v, v != "", nil
	}
	return "", false, nil
}

// The parsers of the table, one for each kind of value.

func text(dst *string) func(string) error {
	return func(v string) error { *dst = v; return nil }
}

// trimmed is text without the blanks around it.
func trimmed(dst *string) func(string) error {
	return func(v string) error { *dst = strings.TrimSpace(v); return nil }
}

// list reads a comma-separated list; blanks around items and empty items are dropped.
func list(dst *[]string) func(string) error {
	return func(v string) error {
		*dst = nil
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*dst = append(*dst, item)
			}
		}
		return nil
	}
}

var errNotNumber = errors.New("is not a number")

func number[T int | int64 | float64](dst *T, parse func(string) (T, error)) func(string) error {
	return func(v string) error {
		n, err := parse(v)
		if err != nil {
			return errNotNumber
		}
		*dst = n
		return nil
	}
}

func parseInt64(v string) (int64, error)   { return strconv.ParseInt(v, 10, 64) }
func parseFloat(v string) (float64, error) { return strconv.ParseFloat(v, 64) }

func nonNegative(dst *float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return errors.New("is not a non-negative number")
		}
		*dst = f
		return nil
	}
}

// flag reads a boolean; an empty value leaves the field alone.
func flag(dst *bool) func(string) error {
	return func(v string) error {
		if v == "" {
			return nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("is neither true nor false")
		}
		*dst = b
		return nil
	}
}

func duration(dst *time.Duration) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return errors.New("is not a duration")
		}
		*dst = d
		return nil
	}
}
