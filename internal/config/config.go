// Package config is the farm's configuration: one documented struct, loaded once in main from
// an optional YAML file and the environment, then handed to the api, worker and coordinator. A
// zero value means "the default" for every field; Load applies the defaults explicitly.
//
// Secrets (Redis password, MinIO keys) are read only from the environment or from files named
// in it, never from the YAML file, and are never logged.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of a mapfarm process.
type Config struct {
	// Listen is the api's TCP address. YAML `listen`, env MAPFARM_LISTEN. Default "127.0.0.1:8080".
	Listen string `yaml:"listen"`
	// PublicURL is the base URL clients reach the api at; it is written into WSDLs and image
	// URLs. YAML `publicURL`, env MAPFARM_PUBLIC_URL. Default "http://" + Listen.
	PublicURL string `yaml:"publicURL"`
	// Namespace is the target namespace of the SOAP messages and WSDL; it ends in "/10.7".
	// YAML `namespace`, env MAPFARM_NAMESPACE. Default "http://schemas.mapfarm.dev/gis/10.7".
	Namespace string `yaml:"namespace"`
	// Services is the service definition file (see docs/service-definitions.md). YAML
	// `services`, env MAPFARM_SERVICES. Default "services/services.yaml".
	Services string `yaml:"services"`
	// Redis is the queue's server. An empty Addr starts the embedded Redis-compatible server
	// in-process (the one-machine default).
	Redis Redis `yaml:"redis"`
	// Store is where rendered images and caches are written.
	Store Store `yaml:"store"`
	// Limits bound requests and work.
	Limits Limits `yaml:"limits"`
	// Worker tunes the render workers.
	Worker Worker `yaml:"worker"`
	// Security holds the api's access controls.
	Security Security `yaml:"security"`
	// Pictures says where the api may fetch pictures that request symbols name by URL.
	Pictures Pictures `yaml:"pictures"`
	// Tiles tunes how the api reads cached tiles.
	Tiles Tiles `yaml:"tiles"`
	// MetricsListen is where a worker or coordinator process serves /metrics and /healthz
	// (the api serves them on its own address). YAML `metricsListen`, env
	// MAPFARM_METRICS_LISTEN. Default empty: no metrics listener for those roles.
	MetricsListen string `yaml:"metricsListen"`
	// LegislativeReload is how often the api looks for a newly imported legislative dataset
	// in the store. YAML `legislativeReload`, env MAPFARM_LEGISLATIVE_RELOAD. Default 15s.
	LegislativeReload time.Duration `yaml:"legislativeReload"`
	// RefreshFilePoll is how often the coordinator looks at the GeoPackage and GeoJSON layers
	// drawn by cached maps for changes (docs/freshness.md). YAML `refreshFilePoll`, env
	// MAPFARM_REFRESH_FILE_POLL. Default 10s.
	RefreshFilePoll time.Duration `yaml:"refreshFilePoll"`
	// LogLevel is debug, info, warn or error. YAML `logLevel`, env MAPFARM_LOG_LEVEL. Default info.
	LogLevel string `yaml:"logLevel"`
	// StateDir holds what a process keeps between its start and its stop for the operator's
	// tools on the same machine: the admin credential an api makes for itself when none is
	// configured (internal/admincred), which cachetool reads. YAML `stateDir`, env
	// MAPFARM_STATE_DIR. Default DefaultStateDir(): "$XDG_STATE_HOME/mapfarm"
	// (~/.local/state/mapfarm). Created with mode 0700.
	StateDir string `yaml:"stateDir"`
}

// DefaultStateDir is the state directory of a configuration that names none:
// $XDG_STATE_HOME/mapfarm, else ~/.local/state/mapfarm, else (no home) a mapfarm directory in
// the temporary directory.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "mapfarm")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "mapfarm")
	}
	return filepath.Join(os.TempDir(), "mapfarm-state")
}

// StateDirFromEnv is the state directory as a tool without a configuration file sees it:
// MAPFARM_STATE_DIR, else DefaultStateDir().
func StateDirFromEnv() string {
	if d := os.Getenv("MAPFARM_STATE_DIR"); d != "" {
		return d
	}
	return DefaultStateDir()
}

// Security configures tokens, rate limits and CORS on the api.
type Security struct {
	// TokenSecret, when set, makes the SOAP endpoints and the JSON API require a token (see
	// `mapfarm token`). From env MAPFARM_TOKEN_SECRET or MAPFARM_TOKEN_SECRET_FILE only; at
	// least 32 bytes.
	TokenSecret string `yaml:"-"`
	// AdminToken, when set, is a credential for the admin routes (seeding jobs, which write and
	// delete tiles): `Authorization: Bearer <AdminToken>`. Admin routes are never anonymous:
	// they take this token, or a token of role admin when TokenSecret is set. When it is not
	// set, an api makes a random one at start and writes it to a file of StateDir that only
	// its user can read (internal/admincred), where cachetool finds it. From env
	// MAPFARM_ADMIN_TOKEN or MAPFARM_ADMIN_TOKEN_FILE only; at least 32 bytes.
	AdminToken string `yaml:"-"`
	// AdminHosts are host names the admin routes accept in a request's Host besides the public
	// URL's host and the loopback names and addresses (localhost, 127.0.0.0/8, ::1); an admin
	// request naming any other host is refused (DNS rebinding). YAML `security.adminHosts`, env
	// MAPFARM_ADMIN_HOSTS (comma-separated, e.g. "ops.internal,10.0.0.5"). Default none.
	AdminHosts []string `yaml:"adminHosts"`
	// RateLimit is requests per second per client (token client, else address), bursts of
	// RateBurst (default: RateLimit rounded up). YAML `security.rateLimit`, env
	// MAPFARM_RATE_LIMIT. Default 0: no limit.
	RateLimit float64 `yaml:"rateLimit"`
	RateBurst int     `yaml:"rateBurst"`
	// CORSOrigins are the browser origins allowed to call the read-only routes (map services,
	// tiles, outputs, the legislative API); "*" for any. YAML `security.corsOrigins`, env
	// MAPFARM_CORS_ORIGINS (comma-separated). Default none set: any origin, answered with
	// "Access-Control-Allow-Origin: *" and no credentials. The admin routes never answer
	// another origin.
	CORSOrigins []string `yaml:"corsOrigins"`
	// TrustedProxies are the addresses or CIDR ranges of the load balancers in front of the api,
	// whose X-Forwarded-For / X-Real-IP then name the client (for rate limits and logs). YAML
	// `security.trustedProxies`, env MAPFARM_TRUSTED_PROXIES (comma-separated, e.g.
	// "10.0.0.0/8,192.168.1.10"). Default none: the client is the peer address.
	TrustedProxies []string `yaml:"trustedProxies"`
}

// Pictures bounds the fetching of the pictures that PictureMarkerSymbols and PictureFillSymbols
// of requests name by PictureUri instead of carrying them (docs/cartography.md). data: URIs and
// URLs of this farm's own outputs are always read; http(s) URLs only from AllowedHosts.
type Pictures struct {
	// AllowedHosts are the hosts http and https PictureUris may name, each "host" (any port) or
	// "host:port". YAML `pictures.allowedHosts`, env MAPFARM_PICTURE_HOSTS (comma-separated).
	// Default none: only data: URIs and this farm's outputs. The api fetches from these hosts
	// on behalf of clients, so list only hosts whose content anyone may see.
	AllowedHosts []string `yaml:"allowedHosts"`
	// MaxBytes bounds one picture. YAML `pictures.maxBytes`. Default 1 MiB.
	MaxBytes int64 `yaml:"maxBytes"`
	// Timeout bounds one fetch. YAML `pictures.timeout`. Default 5s.
	Timeout time.Duration `yaml:"timeout"`
}

// Redis locates the queue's Redis server: one server by address (Addr) or by URL (URL), or a
// Sentinel group (SentinelMaster and Sentinels). They are alternatives; redis.go parses and checks
// them, and internal/redisconn turns them into the one client a process uses.
type Redis struct {
	// Addr is host:port. YAML `redis.addr`, env MAPFARM_REDIS_ADDR. Empty (and no URL or
	// Sentinel): embedded server.
	Addr string `yaml:"addr"`
	// DB is the database number. YAML `redis.db`, env MAPFARM_REDIS_DB. Default 0.
	DB int `yaml:"db"`
	// Password comes from env MAPFARM_REDIS_PASSWORD or the file named by
	// MAPFARM_REDIS_PASSWORD_FILE only.
	Password string `yaml:"-"`
	// URL, instead of Addr: redis://[user[:password]@]host[:port][/db], or rediss:// for TLS.
	// YAML `redis.url` (without a password there), env MAPFARM_REDIS_URL or the file named by
	// MAPFARM_REDIS_URL_FILE. A password in the URL wins over Password, a db over DB.
	URL string `yaml:"url"`
	// SentinelMaster is the master name a Sentinel group monitors, and Sentinels the
	// sentinels' host:port addresses; together, instead of Addr or URL, they make the farm
	// follow the group's failovers. YAML `redis.sentinelMaster`, `redis.sentinels`; env
	// MAPFARM_REDIS_SENTINEL_MASTER, MAPFARM_REDIS_SENTINELS (comma-separated).
	SentinelMaster string   `yaml:"sentinelMaster"`
	Sentinels      []string `yaml:"sentinels"`
	// SentinelPassword, when the sentinels require one (their requirepass), comes from env
	// MAPFARM_REDIS_SENTINEL_PASSWORD or MAPFARM_REDIS_SENTINEL_PASSWORD_FILE only.
	SentinelPassword string `yaml:"-"`
	// Username is the ACL user (Redis 6+) with Addr or Sentinel (a URL names its own). YAML
	// `redis.username`, env MAPFARM_REDIS_USERNAME. Default none (the default user).
	Username string `yaml:"username"`
	// TLS connects with TLS (a rediss:// URL implies it); with Sentinel it applies to the
	// sentinels and the servers. YAML `redis.tls`, env MAPFARM_REDIS_TLS.
	TLS bool `yaml:"tls"`
	// CAFile is a PEM file of the certificate authorities that sign the Redis servers'
	// certificates, for TLS. YAML `redis.caFile`, env MAPFARM_REDIS_CA_FILE. Default: the
	// system's roots.
	CAFile string `yaml:"caFile"`
}

// Store selects the object store.
type Store struct {
	// Kind is "disk" or "minio". YAML `store.kind`, env MAPFARM_STORE. Default "disk".
	Kind string `yaml:"kind"`
	// Dir is the disk store's root. YAML `store.dir`, env MAPFARM_STORE_DIR. Default
	// "$XDG_CACHE_HOME/mapfarm/store" (~/.cache/mapfarm/store).
	Dir string `yaml:"dir"`
	// MinIO is the S3 server used when Kind is "minio".
	MinIO MinIO `yaml:"minio"`
}

// Describe names the store for logs: "disk <dir>" or "minio <http[s]://endpoint> bucket <b>";
// never its keys.
func (s Store) Describe() string {
	if s.Kind == "minio" {
		scheme := "http://"
		if s.MinIO.UseSSL {
			scheme = "https://"
		}
		return "minio " + scheme + s.MinIO.Endpoint + " bucket " + s.MinIO.Bucket
	}
	dir := s.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return s.Kind + " " + dir
}

// MinIO locates a MinIO (or S3-compatible) bucket.
type MinIO struct {
	// Endpoint is host:port. YAML `store.minio.endpoint`, env MAPFARM_MINIO_ENDPOINT.
	Endpoint string `yaml:"endpoint"`
	// Bucket is created when missing. YAML `store.minio.bucket`, env MAPFARM_MINIO_BUCKET.
	// Default "mapfarm".
	Bucket string `yaml:"bucket"`
	// UseSSL selects https. YAML `store.minio.useSSL`, env MAPFARM_MINIO_USE_SSL (true or
	// false).
	UseSSL bool `yaml:"useSSL"`
	// CAFile is a PEM file of the certificate authorities that sign the server's certificate
	// (a private CA), for https. YAML `store.minio.caFile`, env MAPFARM_MINIO_CA_FILE.
	// Default: the system's roots.
	CAFile string `yaml:"caFile"`
	// AccessKey and SecretKey come from env MAPFARM_MINIO_ACCESS_KEY / MAPFARM_MINIO_SECRET_KEY
	// (or *_FILE) only.
	AccessKey string `yaml:"-"`
	SecretKey string `yaml:"-"`
}

// Limits are the documented bounds of the service (docs/limits.md is the table of them, with
// the reasoning behind each default). The api checks every request against them before
// anything is queued; a request over one gets a soap:Client fault naming the limit (its YAML
// key) and its value, and is counted in mapfarm_limit_refusals_total{limit}.
type Limits struct {
	// MaxBodyBytes is the largest request body. Default 8 MiB. Env MAPFARM_MAX_BODY_BYTES.
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// MaxImageWidth and MaxImageHeight bound rendered images (every ImageDisplay of a request).
	// Default 4096 each, ArcGIS Server's default; at most 16384. Env MAPFARM_MAX_IMAGE_WIDTH,
	// MAPFARM_MAX_IMAGE_HEIGHT.
	MaxImageWidth  int `yaml:"maxImageWidth"`
	MaxImageHeight int `yaml:"maxImageHeight"`
	// MaxImageDPI bounds ImageDPI and a CenterAndScale's DPI: 1 to it, 0 meaning 96. Default
	// and most 2400, the renderer's own bound. Env MAPFARM_MAX_IMAGE_DPI.
	MaxImageDPI float64 `yaml:"maxImageDPI"`
	// MaxElements bounds the XML elements of one SOAP request. Default 1,000,000. Env
	// MAPFARM_MAX_ELEMENTS.
	MaxElements int `yaml:"maxElements"`
	// MaxDepth bounds the XML nesting of one SOAP request. Default 64. Env MAPFARM_MAX_DEPTH.
	MaxDepth int `yaml:"maxDepth"`
	// MaxDecodedBytes bounds the memory one SOAP request takes decoded (its Go values, counted
	// as the streaming decoder makes them). Default 10 MiB. Env MAPFARM_MAX_DECODED_BYTES.
	MaxDecodedBytes int64 `yaml:"maxDecodedBytes"`
	// MaxVertices bounds the vertices of all the geometries of one request together (query,
	// identify and find shapes, selection and graphics geometries). Default 100,000. Env
	// MAPFARM_MAX_VERTICES.
	MaxVertices int `yaml:"maxVertices"`
	// MaxPoints bounds the points of one ToMapPoints or FromMapPoints. Default 100,000. Env
	// MAPFARM_MAX_POINTS.
	MaxPoints int `yaml:"maxPoints"`
	// MaxIDs bounds the ids in the id lists of one request together (FIDSet, layer, row and
	// attachment ids). Default 100,000. Env MAPFARM_MAX_IDS.
	MaxIDs int `yaml:"maxIDs"`
	// MaxStringBytes bounds each string of a request: where clauses, definition expressions,
	// field lists, search strings, names and texts (not PictureUri, bounded by
	// pictures.maxBytes). Default 64 KiB; a where clause is also bounded by its parser (64 KiB,
	// 256 levels of nesting, 100,000 IN-list values). Env MAPFARM_MAX_STRING_BYTES.
	MaxStringBytes int `yaml:"maxStringBytes"`
	// RenderTimeout bounds how long the api waits for a render (queue wait included). Default 30s.
	RenderTimeout time.Duration `yaml:"renderTimeout"`
	// OperationTimeout bounds every SOAP operation in the api (a query's scan and geometry tests
	// stop at it; a render waits at most RenderTimeout within it). YAML
	// `limits.operationTimeout`, env MAPFARM_OPERATION_TIMEOUT. Default 60s.
	OperationTimeout time.Duration `yaml:"operationTimeout"`
	// OutputTTL is how long a rendered image stays reachable by its URL. Default 10m.
	OutputTTL time.Duration `yaml:"outputTTL"`
	// MaxRecordCount caps the records one query, find or identify returns (a cap, not a
	// refusal). Default 1000. Env MAPFARM_MAX_RECORD_COUNT.
	MaxRecordCount int `yaml:"maxRecordCount"`
	// APIMemoryLimit is the Go runtime's soft memory limit in an api process (role api; not
	// serve, whose render slots need more): the collector works harder as the process nears
	// it rather than letting the heap double (docs/limits.md, "What an api process needs").
	// Default 180 MiB; negative: none. GOMEMLIMIT, when set, wins. Env
	// MAPFARM_API_MEMORY_LIMIT.
	APIMemoryLimit int64 `yaml:"apiMemoryLimit"`
	// HeavySlots is how many heavy SOAP requests (large bodies, many vertices, ids or points;
	// docs/limits.md, "The api's heavy lane") the api answers at once; the others wait, up to their
	// deadline. Default 1; negative: no lane. Env MAPFARM_HEAVY_SLOTS.
	HeavySlots int `yaml:"heavySlots"`
	// VectorTileMaxFeatures thins a vector tile (on demand or seeded) past this many features
	// of all its layers, saying so in X-Tile-Thinned (docs/vector-tiles.md). Default 100,000
	// (mvt.DefaultMaxFeatures). Env MAPFARM_VECTOR_TILE_MAX_FEATURES.
	VectorTileMaxFeatures int `yaml:"vectorTileMaxFeatures"`
	// VectorTileMaxBytes refuses a vector tile past this many bytes before compression (a
	// fault naming the limit). Default 8 MiB (mvt.DefaultMaxBytes). Env
	// MAPFARM_VECTOR_TILE_MAX_BYTES.
	VectorTileMaxBytes int `yaml:"vectorTileMaxBytes"`
	// VectorTileTimeout is the time limit of one vector tile's read and encoding (within the
	// operation timeout on demand). Default 30s (mvt.DefaultTimeout). Env
	// MAPFARM_VECTOR_TILE_TIMEOUT.
	VectorTileTimeout time.Duration `yaml:"vectorTileTimeout"`
}

// applyDefaults sets the defaults of the limits added with the limits table (the older ones
// are set in Config.applyDefaults).
func (l *Limits) applyDefaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxElements, 1_000_000)
	def(&l.MaxDepth, 64)
	def(&l.MaxVertices, 100_000)
	def(&l.MaxPoints, 100_000)
	def(&l.MaxIDs, 100_000)
	def(&l.MaxStringBytes, 64<<10)
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = 10 << 20
	}
	if l.MaxImageDPI == 0 {
		l.MaxImageDPI = 2400
	}
	if l.APIMemoryLimit == 0 {
		l.APIMemoryLimit = 180 << 20
	}
	def(&l.VectorTileMaxFeatures, 100_000) // mvt.DefaultMaxFeatures (app's TestVectorTileOptions)
	def(&l.VectorTileMaxBytes, 8<<20)      // mvt.DefaultMaxBytes
	if l.VectorTileTimeout <= 0 {
		l.VectorTileTimeout = 30 * time.Second // mvt.DefaultTimeout
	}
}

func (l Limits) validate() []error {
	var errs []error
	if !(l.MaxImageDPI >= 1 && l.MaxImageDPI <= 2400) {
		errs = append(errs, fmt.Errorf("config: limits.maxImageDPI %g is not within 1 and 2400, the renderer's bound", l.MaxImageDPI))
	}
	return errs
}

// Worker tunes the render workers.
type Worker struct {
	// Concurrency is how many tasks one worker process renders at once. Default: the number of
	// CPUs. Env MAPFARM_WORKER_CONCURRENCY.
	Concurrency int `yaml:"concurrency"`
	// PollInterval is how often an awake worker with nothing to do looks for new tasks (asynq's
	// TaskCheckInterval); it bounds the queue latency of interactive renders. Default 1ms: the
	// farm overhead is about 3 ms median (BenchmarkFarmOverhead). Polling costs about 14% of a
	// core in Redis round trips, but only while the worker is awake (IdleAfter). Env
	// MAPFARM_WORKER_POLL_INTERVAL (e.g. "10ms").
	PollInterval time.Duration `yaml:"pollInterval"`
	// IdleAfter is how long a worker polls empty queues before it sleeps until an enqueue wakes
	// it (a Redis Pub/Sub announcement; it also looks every 5 s). Default 2s; negative: never
	// sleep. An idle farm then costs under 1% of a core (BenchmarkIdleCPU). Env
	// MAPFARM_WORKER_IDLE_AFTER.
	IdleAfter time.Duration `yaml:"idleAfter"`
	// Queues are the queues this worker takes tasks from: "interactive" (ExportMapImage,
	// ExportScaleBar, on-demand tiles; it brings "heavy" with it), "heavy" (the expensive
	// renders of HeavyPixels, alone: a worker for large images) and "seed" (seeding jobs). YAML
	// `worker.queues`, env MAPFARM_WORKER_QUEUES (comma-separated). Default all, interactive
	// and seed weighted 6:1, heavy in a lane of its own (HeavySlots). Dedicated seed
	// workers (`seed`) and interactive workers (`interactive`) keep ExportMapImage latency
	// flat during big seeds (docs/seeding.md).
	Queues []string `yaml:"queues"`
	// HeavyPixels is the cost from which an ExportMapImage or ExportScaleBar render is heavy:
	// its width × height, times one more for every layer drawn on a surface of its own (a
	// selection buffer, a translucent layer). The api queues heavy renders on the "heavy"
	// queue, which every worker serves with HeavySlots of its slots, so expensive renders never
	// hold them all (README, Limits). YAML `worker.heavyPixels`, env MAPFARM_WORKER_HEAVY_PIXELS.
	// Default 4194304 (2048×2048); negative: no heavy queue. Read by the api.
	HeavyPixels int64 `yaml:"heavyPixels"`
	// HeavySlots is how many of a worker's Concurrency slots heavy renders may take at once. YAML
	// `worker.heavySlots`, env MAPFARM_WORKER_HEAVY_SLOTS. Default half of Concurrency, at least
	// 1; at most Concurrency-1, so one slot is always left for other renders (a one-slot worker
	// gives heavy renders a slot of their own beside it).
	HeavySlots int `yaml:"heavySlots"`
	// ReleaseMemoryEvery, when positive, makes a worker also release the memory of its heavy
	// renders while it works, at most this often (garbage collections, and debug.FreeOSMemory
	// when no task is in progress); it always does when it goes to sleep, so that its RSS comes
	// back to its baseline. A release costs the renders beside it up to a few hundred
	// milliseconds (docs/render-lanes.md). YAML `worker.releaseMemoryEvery`, env
	// MAPFARM_WORKER_RELEASE_MEMORY_EVERY. Default 0: only when going to sleep.
	ReleaseMemoryEvery time.Duration `yaml:"releaseMemoryEvery"`
}

// Tiles tunes how the api reads tiles of stored caches (GetMapTile, GetLayerTile and the
// virtual cache directories); docs/seeding.md has the figures of each setting.
type Tiles struct {
	// MemoryBytes bounds the served-tile memory: tiles just served, kept for 10 s so that a
	// hot tile costs no store request. YAML `tiles.memoryBytes`, env MAPFARM_TILE_MEMORY_BYTES.
	// Default 16 MiB; negative: off, every tile read goes to the store.
	MemoryBytes int64 `yaml:"memoryBytes"`
	// IndexBytes bounds the cache of compact-bundle indexes (about 128 KiB each), with which a
	// tile read is one ranged GET. YAML `tiles.indexBytes`, env MAPFARM_TILE_INDEX_BYTES.
	// Default 32 MiB (about 250 bundles); negative keeps no index, so every read loads its bundle's index first
	// (the cold-index cost, for measurements only).
	IndexBytes int64 `yaml:"indexBytes"`
	// PageBytes bounds the cache of compact-bundle pages (256 KiB aligned ranges): a tile read
	// that misses fetches its page with one ranged GET, and the tiles stored next to it are
	// then read from memory. Pages go with their bundle's index when it is reloaded or
	// dropped. YAML `tiles.pageBytes`, env MAPFARM_TILE_PAGE_BYTES. Default 16 MiB; negative:
	// off, every tile read is one ranged GET of the tile.
	PageBytes int64 `yaml:"pageBytes"`
	// RecentBytes bounds the api's memory of freshly rendered images (ExportMapImage,
	// ExportScaleBar and legend outputs handed out by URL), which answers their URLs before the
	// worker's write to the store lands; each is kept for at most a minute. YAML
	// `tiles.recentBytes`, env MAPFARM_RECENT_OUTPUT_BYTES. Default 16 MiB; negative: off (URLs
	// are served from the store only, which another api replica does anyway).
	RecentBytes int64 `yaml:"recentBytes"`
}

// Load reads the YAML file at path (none when path is empty), applies the environment and the
// defaults, and validates the result.
func Load(path string) (*Config, error) {
	c := &Config{}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if err := c.Redis.yamlSecrets(path); err != nil {
		return nil, err
	}
	if err := c.applyEnv(); err != nil {
		return nil, err
	}
	c.applyDefaults()
	return c, c.Validate()
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Listen
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.Namespace == "" {
		c.Namespace = "http://schemas.mapfarm.dev/gis/10.7"
	}
	if c.Services == "" {
		c.Services = "services/services.yaml"
	}
	if c.Store.Kind == "" {
		c.Store.Kind = "disk"
	}
	if c.Store.Dir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		c.Store.Dir = dir + "/mapfarm/store"
	}
	if c.Store.MinIO.Bucket == "" {
		c.Store.MinIO.Bucket = "mapfarm"
	}
	l := &c.Limits
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = 8 << 20
	}
	if l.MaxImageWidth <= 0 {
		l.MaxImageWidth = 4096
	}
	if l.MaxImageHeight <= 0 {
		l.MaxImageHeight = 4096
	}
	if l.RenderTimeout <= 0 {
		l.RenderTimeout = 30 * time.Second
	}
	if l.OutputTTL <= 0 {
		l.OutputTTL = 10 * time.Minute
	}
	if l.MaxRecordCount <= 0 {
		l.MaxRecordCount = 1000
	}
	if c.Worker.Concurrency <= 0 {
		c.Worker.Concurrency = runtime.NumCPU()
	}
	if c.Limits.OperationTimeout <= 0 {
		c.Limits.OperationTimeout = time.Minute
	}
	if c.Worker.IdleAfter == 0 {
		c.Worker.IdleAfter = 2 * time.Second
	}
	if c.Worker.HeavyPixels == 0 {
		c.Worker.HeavyPixels = 2048 * 2048
	}
	if c.Worker.HeavySlots <= 0 {
		c.Worker.HeavySlots = max(1, c.Worker.Concurrency/2)
	}
	if c.Worker.PollInterval <= 0 {
		c.Worker.PollInterval = time.Millisecond
	}
	// The api's caches: 80 MiB together by default, so that an api process stays under 200 MB
	// (docs/limits.md, "What an api process needs").
	if c.Tiles.MemoryBytes == 0 {
		c.Tiles.MemoryBytes = 16 << 20
	}
	if c.Tiles.IndexBytes == 0 {
		c.Tiles.IndexBytes = 32 << 20
	}
	if c.Tiles.PageBytes == 0 {
		c.Tiles.PageBytes = 16 << 20
	}
	if c.Tiles.RecentBytes == 0 {
		c.Tiles.RecentBytes = 16 << 20
	}
	if c.Pictures.MaxBytes <= 0 {
		c.Pictures.MaxBytes = 1 << 20
	}
	if c.Pictures.Timeout <= 0 {
		c.Pictures.Timeout = 5 * time.Second
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.LegislativeReload <= 0 {
		c.LegislativeReload = 15 * time.Second
	}
	if c.RefreshFilePoll <= 0 {
		c.RefreshFilePoll = 10 * time.Second
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir()
	}
	c.Limits.applyDefaults()
}

// Validate reports every inconsistency at once.
func (c *Config) Validate() error {
	var errs []error
	if !strings.HasSuffix(c.Namespace, "/10.7") {
		errs = append(errs, fmt.Errorf("config: namespace %q must end in /10.7", c.Namespace))
	}
	errs = append(errs, c.Redis.validate()...)
	switch c.Store.Kind {
	case "disk":
	case "minio":
		if c.Store.MinIO.Endpoint == "" {
			errs = append(errs, errors.New("config: store.kind is minio but no endpoint is set (store.minio.endpoint or MAPFARM_MINIO_ENDPOINT)"))
		}
		if c.Store.MinIO.CAFile != "" && !c.Store.MinIO.UseSSL && !strings.HasPrefix(c.Store.MinIO.Endpoint, "https://") {
			errs = append(errs, errors.New("config: store.minio.caFile (MAPFARM_MINIO_CA_FILE) is set but the endpoint is plain http: set store.minio.useSSL (MAPFARM_MINIO_USE_SSL=true)"))
		}
		if c.Store.MinIO.AccessKey == "" || c.Store.MinIO.SecretKey == "" {
			errs = append(errs, errors.New("config: store.kind is minio but MAPFARM_MINIO_ACCESS_KEY / MAPFARM_MINIO_SECRET_KEY are not set"))
		}
	default:
		errs = append(errs, fmt.Errorf("config: store.kind %q is neither disk nor minio", c.Store.Kind))
	}
	if c.Limits.MaxImageWidth > 16384 || c.Limits.MaxImageHeight > 16384 {
		errs = append(errs, errors.New("config: image limits above 16384 pixels are not supported"))
	}
	errs = append(errs, c.Limits.validate()...)
	if s := c.Security.TokenSecret; s != "" && len(s) < 32 {
		errs = append(errs, errors.New("config: MAPFARM_TOKEN_SECRET must be at least 32 bytes"))
	}
	if s := c.Security.AdminToken; s != "" && len(s) < 32 {
		errs = append(errs, errors.New("config: MAPFARM_ADMIN_TOKEN must be at least 32 bytes"))
	}
	for _, p := range c.Security.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			errs = append(errs, fmt.Errorf("config: trusted proxy %q is neither an IP address nor a CIDR range", p))
		}
	}
	if c.Security.RateLimit < 0 {
		errs = append(errs, errors.New("config: security.rateLimit must not be negative"))
	}
	for _, q := range c.Worker.Queues {
		if q != "interactive" && q != "heavy" && q != "seed" {
			errs = append(errs, fmt.Errorf("config: worker.queues: %q is not interactive, heavy or seed", q))
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("config: logLevel %q is not debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}
