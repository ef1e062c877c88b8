// Package redisconn builds the one Redis client a mapfarm process uses, from config.Redis: a
// single server by address or URL (redis://, rediss:// with TLS), or a Sentinel group that the
// client follows through failovers.
//
// The configuration is mapped onto asynq's own connection options (asynq.ParseRedisURI for a URL,
// asynq.RedisFailoverClientOpt for Sentinel, asynq.RedisClientOpt for an address), and the client
// is the one those options make. asynq's server, client and inspector are built on that same
// client (asynq.New*FromRedisClient), as are the farm's own keys: result lists, the enqueue
// wake-up Pub/Sub, seeding jobs, the store identity and the output id key. One process, one
// pool, one view of which server is the primary.
//
// go-redis's own log lines (its pool, Sentinel) go through slog once a program calls RouteLogs
// (log.go): mapfarm's main and cachetool's local farm do.
package redisconn

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/config"
)

// PoolSize is the connections one process keeps at most: an api holds one per waiting render
// (a blocking pop on its result list), so the default of 10 per CPU is too few.
const PoolSize = 256

// Options maps cfg onto asynq's connection options. embeddedAddr is the embedded server's
// address, used when cfg names no Redis.
func Options(cfg config.Redis, embeddedAddr string) (asynq.RedisConnOpt, error) {
	var tlsConf *tls.Config
	if cfg.TLS || cfg.CAFile != "" {
		var err error
		if tlsConf, err = tlsConfig(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.Sentinel():
		return asynq.RedisFailoverClientOpt{
			MasterName:       cfg.SentinelMaster,
			SentinelAddrs:    cfg.Sentinels,
			SentinelPassword: cfg.SentinelPassword,
			Username:         cfg.Username,
			Password:         cfg.Password,
			DB:               cfg.DB,
			PoolSize:         PoolSize,
			TLSConfig:        tlsConf,
		}, nil
	case cfg.URL != "":
		u, err := cfg.ParseURL() // the checks and messages of config; asynq's parser below
		if err != nil {
			return nil, err
		}
		parsed, err := asynq.ParseRedisURI(cfg.URL)
		if err != nil {
			// Its errors may quote the URL: never with the password.
			msg := err.Error()
			if u.Password != "" {
				msg = strings.ReplaceAll(msg, u.Password, "xxxxx")
			}
			return nil, fmt.Errorf("redis: %s: %s", cfg.Describe(""), msg)
		}
		opt, ok := parsed.(asynq.RedisClientOpt)
		if !ok {
			return nil, fmt.Errorf("redis: %s: asynq parsed the URL as %T, not one server", cfg.Describe(""), parsed)
		}
		// asynq's parser keeps the URL's host as it is and drops its user name.
		opt.Addr, opt.Username, opt.PoolSize = u.Addr, u.Username, PoolSize
		if u.Password == "" {
			opt.Password = cfg.Password
		}
		if u.DB < 0 {
			opt.DB = cfg.DB
		}
		if u.TLS || tlsConf != nil {
			if tlsConf == nil {
				if tlsConf, err = tlsConfig(""); err != nil {
					return nil, err
				}
			}
			if opt.TLSConfig != nil {
				tlsConf.ServerName = opt.TLSConfig.ServerName
			}
			opt.TLSConfig = tlsConf
		}
		return opt, nil
	default:
		addr := cfg.Addr
		if cfg.Embedded() {
			addr = embeddedAddr
		}
		return asynq.RedisClientOpt{Addr: addr, Username: cfg.Username, Password: cfg.Password, DB: cfg.DB,
			PoolSize: PoolSize, TLSConfig: tlsConf}, nil
	}
}

// New returns the client for cfg (see Options); the caller closes it.
func New(cfg config.Redis, embeddedAddr string) (redis.UniversalClient, error) {
	opt, err := Options(cfg, embeddedAddr)
	if err != nil {
		return nil, err
	}
	made := opt.MakeRedisClient()
	c, ok := made.(redis.UniversalClient)
	if !ok {
		return nil, fmt.Errorf("redis: %s: asynq made a %T, not a go-redis client", cfg.Describe(embeddedAddr), made)
	}
	return c, nil
}

// tlsConfig is TLS 1.2 or later, trusting the certificate authorities in caFile, or the
// system's when caFile is empty. The server name is the dialled host's (go-redis dials with
// tls.DialWithDialer, which fills it in).
func tlsConfig(caFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return c, nil
	}
	pool, err := config.CertPool(caFile)
	if err != nil {
		return nil, fmt.Errorf("redis: redis.caFile (MAPFARM_REDIS_CA_FILE): %w", err)
	}
	c.RootCAs = pool
	return c, nil
}
