// Package app wires the farm's roles from a configuration: it opens Redis (or the embedded
// server), the object store and the catalog, and runs the api, worker and coordinator a role
// needs until its context ends. The mapfarm command and the end-to-end tests share it.
package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mapfarm/mapfarm/api"
	"github.com/mapfarm/mapfarm/coordinator"
	"github.com/mapfarm/mapfarm/internal/admincred"
	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/embedredis"
	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/legislative"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/ogcapi"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/redisconn"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/token"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
	"github.com/mapfarm/mapfarm/internal/vectortile"
	"github.com/mapfarm/mapfarm/internal/vectortileserver"
	"github.com/mapfarm/mapfarm/internal/wms"
	"github.com/mapfarm/mapfarm/worker"
)

// Roles name what one process runs.
const (
	RoleServe       = "serve" // api + coordinator + worker
	RoleAPI         = "api"
	RoleWorker      = "worker"
	RoleCoordinator = "coordinator"
)

// Hooks let the caller observe the running farm and choose what it does when it starts.
type Hooks struct {
	// Listening is called with the api's public URL and the loaded catalog once it accepts
	// connections.
	Listening func(publicURL string, cat *catalog.Catalog)
	// AdminCredential, when set, is called before Listening with where the admin credential
	// is: the file of the state directory holding the one this api made at start (no admin
	// token configured), or "" when the configuration names one (MAPFARM_ADMIN_TOKEN).
	AdminCredential func(file string)
	// SeedAtStart, for the serve role, submits a seeding job for every map whose cache has
	// seedAtStart once the api accepts connections (seed.StartRequests). mapfarm serve sets
	// it; cachetool's local farm and the end-to-end tests do not.
	SeedAtStart bool
	// SeedOnly leaves the refresh of caches out of the coordinator (coordinator.Params.NoRefresh)
	// and keeps the coordinator from writing its state file: cachetool's local farm, which
	// lives only as long as one command, sets it.
	SeedOnly bool
}

// Run wires the components a role needs and runs them until ctx ends. A ctx that ends is a
// clean stop, also while the role is still starting: what a cancelled dial, ping or read then
// returns (context.Canceled, "operation was canceled") is not a failure, and Run returns nil.
func Run(ctx context.Context, role string, cfg *config.Config, logger *slog.Logger, hooks Hooks) error {
	err := run(ctx, role, cfg, logger, hooks)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		logger.Info("stopped while starting", "role", role, "err", err)
		return nil
	}
	return err
}

func run(ctx context.Context, role string, cfg *config.Config, logger *slog.Logger, hooks Hooks) error {
	runAPI := role == "serve" || role == "api"
	runWorker := role == "serve" || role == "worker"
	runCoord := role == "serve" || role == "coordinator"

	// Redis: the embedded server only when everything runs in this one process.
	redisAddr := cfg.Redis.Addr
	if cfg.Redis.Embedded() {
		if role != "serve" {
			return errors.New("a separate " + role + " needs a shared Redis: set MAPFARM_REDIS_ADDR, MAPFARM_REDIS_URL or Sentinel (MAPFARM_REDIS_SENTINEL_MASTER and MAPFARM_REDIS_SENTINELS)")
		}
		srv, err := embedredis.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		redisAddr = srv.Addr()
		logger.Info("embedded redis started", "addr", redisAddr)
	}
	// The one client of this process: asynq's server, client and inspectors and the farm's own
	// keys all use it (internal/redisconn).
	rdb, err := redisconn.New(cfg.Redis, redisAddr)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis %s: %w", cfg.Redis.Describe(redisAddr), err)
	}

	// Every start line names the Redis and the store, so that a worker writing to a local disk
	// while the api reads MinIO shows in the logs.
	where := StartAttrs(cfg, redisAddr)

	m := metrics.New()
	applyMemoryLimit(role, cfg.Limits.APIMemoryLimit, logger)
	reportLimits(m, cfg.Limits)
	raw, err := OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	store := m.InstrumentStore(raw)
	// The api publishes its store's identity; the other processes refuse to run on another store.
	if runAPI {
		if _, err := publishStoreID(ctx, rdb, raw); err != nil {
			return err
		}
	} else if err := waitStoreID(ctx, rdb, raw, cfg.Store.Describe(), time.Minute, logger); err != nil {
		return err
	}
	var cat *catalog.Catalog
	// ready says whether this process's dependencies answer: Redis, the object store and, for
	// the processes that read features, every data source.
	ready := func(ctx context.Context) error {
		if err := rdb.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		if _, err := store.Stat(ctx, "readyz-probe"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: %w", err)
		}
		if cat != nil {
			if err := cat.Ping(ctx); err != nil {
				return fmt.Errorf("data source %w", err)
			}
		}
		return nil
	}

	// The coordinator reads the definition too: the refresh of caches follows the maps' data
	// (coordinator/refresh.go).
	var connections map[string]*provider.Connection
	if runAPI || runWorker || runCoord {
		reg := providers.Registry()
		def, err := servicedef.Load(cfg.Services, reg)
		if err != nil {
			return err
		}
		connections = def.Connections
		cat, err = catalog.Open(ctx, def, reg)
		if err != nil {
			return err
		}
		defer cat.Close()
	}

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	g, gctx := errgroup.WithContext(runCtx)
	// A failure while the api is set up (its listener, its admin credential) returns with the
	// worker and coordinator already running: stop them and wait for them before Redis, the
	// store and the catalog are closed under them.
	defer func() {
		stopRun()
		g.Wait()
	}()
	if runWorker {
		r, err := render.NewRenderer()
		if err != nil {
			return err
		}
		w := worker.New(worker.Params{Redis: rdb, Catalog: cat, Store: store, Renderer: r, VectorTiles: vectorTileOptions(cfg.Limits),
			Concurrency: cfg.Worker.Concurrency, HeavySlots: cfg.Worker.HeavySlots, ReleaseMemoryEvery: cfg.Worker.ReleaseMemoryEvery,
			PollInterval: cfg.Worker.PollInterval, IdleAfter: cfg.Worker.IdleAfter, Logger: logger, Metrics: m,
			Tiles: store, Queues: cfg.Worker.Queues, StartAttrs: where})
		g.Go(func() error { return w.Run(gctx) })
	}
	if runCoord {
		c := coordinator.New(coordinator.Params{Store: store, OutputPrefix: api.OutputPrefix, OutputTTL: cfg.Limits.OutputTTL, Logger: logger,
			Redis: rdb, Metrics: m, Tiles: store, Catalog: cat, Connections: connections,
			NoRefresh: hooks.SeedOnly, RefreshState: refreshState(cfg.StateDir, cfg.Redis.Describe(redisAddr)),
			RefreshFilePoll: cfg.RefreshFilePoll, StartAttrs: where})
		g.Go(func() error { return c.Run(gctx) })
	}
	if runAPI {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return fmt.Errorf("api: listen: %w", err)
		}
		publicURL := cfg.PublicURL
		if strings.HasSuffix(cfg.Listen, ":0") && publicURL == "http://"+cfg.Listen {
			publicURL = "http://" + ln.Addr().String()
		}
		adminToken, credFile, err := adminCredential(cfg, ln.Addr())
		if err != nil {
			ln.Close()
			return err
		}
		if credFile != "" {
			defer admincred.Remove(credFile, adminToken)
			logger.Info("admin credential made at start", "file", credFile)
		}
		recent := api.NewRecentOutputs(cfg.Tiles.RecentBytes)
		idKey, err := api.OutputIDKey(ctx, rdb)
		if err != nil {
			return err
		}
		outputIDs, err := api.NewOutputIDs(idKey)
		if err != nil {
			return err
		}
		tileIndex := tilecache.NewIndexCache(tilecache.IndexCacheOptions{MaxBytes: cfg.Tiles.IndexBytes, PageBytes: cfg.Tiles.PageBytes})
		ops := mapserver.New(mapserver.Params{
			Tiles: store, TileIndex: tileIndex, TileMemoryBytes: cfg.Tiles.MemoryBytes,
			CacheURL: func(service, mapName, folder string) string {
				return api.CacheURL(publicURL, service, mapName, folder)
			},
			Recent:   recent,
			Outputs:  store,
			Catalog:  cat,
			Exporter: farm.NewClient(rdb, cfg.Limits.RenderTimeout, farm.HeavyPixels(cfg.Worker.HeavyPixels)),
			Limits: mapserver.Limits{MaxImageWidth: cfg.Limits.MaxImageWidth, MaxImageHeight: cfg.Limits.MaxImageHeight,
				MaxRecordCount: cfg.Limits.MaxRecordCount, MaxBodyBytes: cfg.Limits.MaxBodyBytes, MaxPoints: cfg.Limits.MaxPoints},
			OutputURL: func(key string) string { return api.OutputURL(publicURL, key) },
			NewID:     outputIDs.NewID,
			Logger:    logger,
			Pictures: mapserver.PictureOptions{AllowedHosts: cfg.Pictures.AllowedHosts,
				MaxBytes: cfg.Pictures.MaxBytes, Timeout: cfg.Pictures.Timeout},
		})
		m.RegisterCaches(recent.Cache())
		m.RegisterCaches(tileIndex.Caches()...)
		m.RegisterCaches(ops.Caches()...)
		seedAdmin := &seed.Admin{Jobs: seed.NewJobs(rdb), Catalog: cat, NewID: api.NewID}
		sec := api.Security{AdminToken: adminToken, AdminHosts: cfg.Security.AdminHosts, RateLimit: cfg.Security.RateLimit, RateBurst: cfg.Security.RateBurst, CORSOrigins: cfg.Security.CORSOrigins,
			TrustedProxies: cfg.Security.TrustedProxies}
		if cfg.Security.TokenSecret != "" {
			signer, err := token.NewSigner([]byte(cfg.Security.TokenSecret))
			if err != nil {
				return err
			}
			sec.Tokens = signer
		}
		// The legislative API serves the dataset imported into the store (mapfarm
		// import-legislative), or the built-in one, and picks up a new import without a restart.
		leg := legislative.New(legislative.Options{})
		reloader := legislative.NewReloader(leg, store, legislative.ReloaderOptions{Interval: cfg.LegislativeReload, Logger: logger})
		g.Go(func() error {
			if err := reloader.Run(gctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		})
		// One request policy (limits, heavy lane) for the SOAP and REST front ends.
		admission := api.NewAdmission(requestLimits(cfg.Limits), api.HeavyLane{Slots: cfg.Limits.HeavySlots}, m.Registry)
		// One vector tile builder for the VectorTileServer and the OGC API's vector tilesets.
		vtb, err := vectortile.New(vectortile.Params{Services: cat, Options: vectorTileOptions(cfg.Limits)})
		if err != nil {
			return err
		}
		vts, err := vectorTileServer(cat, vtb, vectortileserver.NewStoreCaches(store, tileIndex), admission, publicURL, cfg.Limits.OperationTimeout, logger)
		if err != nil {
			return err
		}
		m.RegisterCaches(vts.Caches()...)
		srv := api.New(api.Params{
			Security:  sec,
			PublicURL: publicURL, MaxBodyBytes: cfg.Limits.MaxBodyBytes, OutputTTL: cfg.Limits.OutputTTL,
			OperationTimeout: cfg.Limits.OperationTimeout,
			Admission:        admission,
			Ops:              ops, Recent: recent, OutputIDs: outputIDs, Outputs: store,
			Codec:       soap.NewCodec(cfg.Namespace, codecLimits(cfg.Limits)),
			Legislative: leg,
			Catalog:     cat,
			SeedJobs:    seedAdmin,
			Refresh:     &refresh.Admin{Backlog: refresh.NewBacklog(rdb), Catalog: cat},
			Tiles:       store, TileIndex: tileIndex,
			WMS: wms.New(wms.Params{Server: ops, PublicURL: publicURL, Admit: admission.Operation, Timeout: cfg.Limits.OperationTimeout,
				MaxImageWidth: cfg.Limits.MaxImageWidth, MaxImageHeight: cfg.Limits.MaxImageHeight, Observe: api.WMSObserver(m), Logger: logger}),
			OGC: ogcapi.New(ogcapi.Params{Server: ops, PublicURL: publicURL, Admit: admission.Operation, Timeout: cfg.Limits.OperationTimeout,
				MaxRecordCount: cfg.Limits.MaxRecordCount, MaxImageWidth: cfg.Limits.MaxImageWidth, MaxImageHeight: cfg.Limits.MaxImageHeight,
				VectorTiles: vtb, TileBuild: admission.TileBuild, Logger: logger}),
			REST: rest.New(rest.Params{Ops: ops, Services: cat, PublicURL: publicURL, Logger: logger, TokenBased: sec.Tokens != nil, WMS: true, VectorTiles: true,
				Admit: admission.Operation, OperationTimeout: cfg.Limits.OperationTimeout, Observe: api.RESTObserver(m),
				MaxRecordCount: cfg.Limits.MaxRecordCount, MaxImageWidth: cfg.Limits.MaxImageWidth, MaxImageHeight: cfg.Limits.MaxImageHeight}),
			VectorTiles: vts,
			Ready:       ready,
			Logger:      logger,
			Metrics:     m,
			StartAttrs:  where,
		})
		// Every api drops at once what it keeps of the tiles a job (or a bundle write) changed
		// (docs/freshness.md); it listens before it serves.
		subscribed := make(chan struct{})
		g.Go(func() error {
			return refresh.Subscribe(gctx, rdb, func() { close(subscribed) }, func(v refresh.Invalidation) {
				tileIndex.InvalidateWhere(v.CoversBundleKey)
				ops.ForgetTiles(v)
				srv.ForgetTiles(v)
				vts.ForgetTiles(v)
			})
		})
		select {
		case <-subscribed:
		case <-gctx.Done():
		}
		g.Go(func() error { return srv.Run(gctx, ln) })
		if hooks.SeedAtStart && role == RoleServe {
			g.Go(func() error { return seedAtStart(gctx, seedAdmin, cat, logger) })
		}
		if hooks.AdminCredential != nil {
			hooks.AdminCredential(credFile)
		}
		if hooks.Listening != nil {
			hooks.Listening(publicURL, cat)
		}
	}
	if !runAPI && cfg.MetricsListen != "" {
		// Workers and coordinators have no api: their metrics get a listener of their own.
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			return fmt.Errorf("metrics: listen: %w", err)
		}
		g.Go(func() error { return serveMetrics(gctx, ln, m, ready) })
	}
	return g.Wait()
}

// refreshState is the coordinator's file of the file-backed layers' state (row digests of
// GeoPackages, hashes of GeoJSON files) in the state directory, one per farm (named after a
// hash of its Redis), or "" when there is no state directory.
func refreshState(dir, redis string) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(redis))
	return filepath.Join(dir, "refresh-files-"+hex.EncodeToString(sum[:6])+".sqlite")
}

// adminCredential is the api's admin token: the configured one, or one made now and written
// to the state directory's file for the port of addr (internal/admincred), which it returns too.
// An api whose made credential cannot be kept does not start: nobody could use its admin routes.
func adminCredential(cfg *config.Config, addr net.Addr) (token, file string, err error) {
	if cfg.Security.AdminToken != "" {
		return cfg.Security.AdminToken, "", nil
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", "", fmt.Errorf("api: admin credential: %w", err)
	}
	token, file = admincred.New(), admincred.Path(cfg.StateDir, port)
	if err := admincred.Write(file, token); err != nil {
		return "", "", fmt.Errorf("api: no admin token is configured (MAPFARM_ADMIN_TOKEN) and the one made at start cannot be kept "+
			"(set MAPFARM_STATE_DIR to a directory this user may write): %w", err)
	}
	return token, file, nil
}

// seedAtStart submits the start-up seeding jobs through the admin path POST /admin/seed takes,
// so the coordinator and workers seed them as any other job.
func seedAtStart(ctx context.Context, admin *seed.Admin, cat *catalog.Catalog, logger *slog.Logger) error {
	for _, req := range seed.StartRequests(cat) {
		st, err := admin.Submit(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("seed %s/%s at start: %w", req.Service, req.Map, err)
		}
		logger.Info("seeding at start", "job", st.ID, "map_service", req.Service, "map", req.Map, "tiles", st.Total)
	}
	return nil
}

// serveMetrics serves /metrics, /healthz and /readyz until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, m *metrics.Metrics, ready func(context.Context) error) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// StartAttrs are the log attributes naming the Redis (at redisAddr: the configured or the
// embedded server) and the store a process uses; never a password or a key.
func StartAttrs(cfg *config.Config, redisAddr string) []any {
	return []any{"redis", cfg.Redis.Describe(redisAddr), "store", cfg.Store.Describe()}
}

// OpenStore opens the object store the configuration names.
func OpenStore(ctx context.Context, cfg *config.Config) (blob.Store, error) {
	if cfg.Store.Kind == "minio" {
		m := cfg.Store.MinIO
		return blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: m.Endpoint, AccessKey: m.AccessKey, SecretKey: m.SecretKey,
			Bucket: m.Bucket, UseSSL: m.UseSSL, CAFile: m.CAFile, CreateBucket: true, MaxRetries: 2})
	}
	return blob.NewDisk(cfg.Store.Dir)
}

// vectorTileServer is the VectorTileServer of every service (internal/vectortileserver): tiles
// read from a seeded vector cache of stored, else built on demand by b (gzip-compressed once),
// within the encoder's default limits and the operation timeout, at the lower CPU priority of
// the admission's heavy work.
func vectorTileServer(cat *catalog.Catalog, b *vectortile.Builder, stored vectortileserver.Stored, adm *api.Admission, publicURL string, timeout time.Duration, logger *slog.Logger) (*vectortileserver.Handler, error) {
	r, err := render.NewRenderer()
	if err != nil {
		return nil, err
	}
	return vectortileserver.New(vectortileserver.Params{Services: cat, Builder: b, Stored: stored, Glyphs: vectorfonts.New(r.Fonts(), 0),
		Renderer: r, PublicURL: publicURL, Timeout: timeout, Run: adm.TileBuild, Logger: logger}), nil
}
