package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/admincred"
	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/redisconn"
	"github.com/mapfarm/mapfarm/internal/seed"
)

// adminClient talks to the api's admin endpoints (/admin/seed).
type adminClient struct {
	base  string // the api's base URL, no trailing slash
	http  *http.Client
	token string // the admin credential, sent as a bearer token when set
	// missing says why there is no token, for the error of a refused request.
	missing string
}

// newAdminClient returns a client of the api at base. Its admin credential is
// MAPFARM_ADMIN_TOKEN (the farm's admin token, or a token of role admin from `mapfarm token
// -role admin`), else, for an api on this machine (a loopback URL), the one that api made at
// start, from the state directory (MAPFARM_STATE_DIR; internal/admincred).
func newAdminClient(base string, timeout time.Duration) *adminClient {
	c := &adminClient{base: strings.TrimSuffix(base, "/"), http: &http.Client{Timeout: timeout}, token: os.Getenv("MAPFARM_ADMIN_TOKEN")}
	if c.token == "" {
		cred, _, err := admincred.Find(config.StateDirFromEnv(), c.base)
		if err != nil {
			c.missing = "no admin credential: set MAPFARM_ADMIN_TOKEN, or run cachetool as the api's user on its machine (" + err.Error() + ")"
		}
		c.token = cred
	}
	return c
}

func (c *adminClient) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		msg := resp.Status
		switch {
		case resp.StatusCode == http.StatusUnauthorized && c.missing != "":
			msg = resp.Status + ": " + c.missing
		case json.Unmarshal(b, &e) == nil && e.Error != "":
			msg = e.Error
		}
		return &statusError{method: method, path: path, code: resp.StatusCode, msg: msg}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// statusError is an answer of the api other than a success.
type statusError struct {
	method, path string
	code         int
	msg          string // the api's JSON error, else the HTTP status
}

func (e *statusError) Error() string { return fmt.Sprintf("%s %s: %s", e.method, e.path, e.msg) }

// transient reports whether a failed request may succeed when repeated: the api could not be
// reached or did not answer (a connection refused or reset, a timeout), or answered that it
// could not serve the request for now (500, 502, 503, 504, 429), as during a Redis failover or
// an api restart. A refusal of the request itself (400, 401, 403, 404) is not.
func transient(err error) bool {
	var se *statusError
	if !errors.As(err, &se) {
		return true // no answer at all
	}
	switch se.code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
		http.StatusTooManyRequests:
		return true
	}
	return false
}

// farmFlags select the farm: a running api (-server), or a local one-machine farm started
// in this process from the mapfarm configuration (-config and the MAPFARM_* environment).
type farmFlags struct {
	server string
	config string
}

func (f *farmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "base URL of a running mapfarm api (e.g. http://127.0.0.1:8080); empty: run a local farm in this process")
	fs.StringVar(&f.config, "config", "", "mapfarm configuration file for the local farm and direct store access (default: MAPFARM_* environment only)")
}

// connect returns a client of the farm and a function that stops a local farm.
func (f *farmFlags) connect(ctx context.Context, stderr io.Writer) (*adminClient, func(), error) {
	hc := &http.Client{Timeout: 60 * time.Second}
	if f.server != "" {
		return newAdminClient(f.server, hc.Timeout), func() {}, nil
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return nil, nil, err
	}
	cfg.Listen = "127.0.0.1:0"
	cfg.PublicURL = "http://127.0.0.1:0"
	if cfg.Security.AdminToken == "" {
		// The local farm lives in this process: its admin credential never needs a file.
		cfg.Security.AdminToken = admincred.New()
	}
	ctx, cancel := context.WithCancel(ctx)
	urlc := make(chan string, 1)
	errc := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	redisconn.RouteLogs(logger) // go-redis's one logger per process (internal/redisconn)
	go func() {
		errc <- app.Run(ctx, app.RoleServe, cfg, logger, app.Hooks{SeedOnly: true, Listening: func(u string, _ *catalog.Catalog) { urlc <- u }})
	}()
	select {
	case u := <-urlc:
		fmt.Fprintf(stderr, "local farm at %s (store %s)\n", u, cfg.Store.Kind)
		stop := func() {
			cancel()
			select {
			case <-errc:
			case <-time.After(40 * time.Second):
			}
		}
		cl := &adminClient{base: u, http: hc, token: cfg.Security.AdminToken}
		return cl, stop, nil
	case err := <-errc:
		cancel()
		return nil, nil, fmt.Errorf("local farm: %w", err)
	case <-time.After(2 * time.Minute):
		cancel()
		return nil, nil, errors.New("local farm did not start within 2 minutes")
	}
}

// parseLevels reads "0-7", "3" or "0,2,5".
func parseLevels(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("levels %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("levels %q: %w", s, err)
			}
		}
		if b < a || b-a > 100 {
			return nil, fmt.Errorf("levels %q: bad range %d-%d", s, a, b)
		}
		for l := a; l <= b; l++ {
			out = append(out, l)
		}
	}
	return out, nil
}

// parseExtent reads "xmin,ymin,xmax,ymax".
func parseExtent(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, fmt.Errorf("extent %q: want xmin,ymin,xmax,ymax", s)
	}
	out := make([]float64, 4)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("extent %q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}

type seedOptions struct {
	farm          farmFlags
	service, mapN string
	levels        string
	extent        string
	polygon       string
	mode          string
	refreshBefore string
	skipEmpty     string
	format        string
	id            string
	maxFailures   int64
	wait          bool
	timeout       time.Duration
	pollGrace     time.Duration
}

// seedCmd submits a job (mode from the command: seed or truncate) and, with -wait (the
// default), shows its progress until it ends.
func seedCmd(ctx context.Context, name string, args []string, out, stderr io.Writer) error {
	var o seedOptions
	fs := flag.NewFlagSet("cachetool "+name, flag.ContinueOnError)
	o.farm.register(fs)
	fs.StringVar(&o.service, "service", "world", "service name")
	fs.StringVar(&o.mapN, "map", "", "map name (default: the service's default map)")
	fs.StringVar(&o.levels, "levels", "", "levels, e.g. 0-7 or 0,2,4 (default: every level of the cache)")
	fs.StringVar(&o.extent, "extent", "", "area of interest xmin,ymin,xmax,ymax in the map's SR (default: the map's full extent)")
	fs.StringVar(&o.polygon, "polygon", "", "area of interest as a JSON array of rings of [x,y] (instead of -extent)")
	if name == "seed" {
		fs.StringVar(&o.mode, "mode", "recreateAll", "recreateAll, recreateEmpty (resume) or delete")
		fs.StringVar(&o.refreshBefore, "refresh-before", "", "with recreateEmpty, also re-render tiles stored before this RFC 3339 time")
		fs.StringVar(&o.skipEmpty, "skip-empty", "", "true/false: do not store tiles with nothing but background (default: the cache's setting)")
	} else {
		o.mode = "delete"
	}
	fs.StringVar(&o.format, "format", "", "the cache: empty for the map's raster cache, pbf for its vector tile cache (arcgiscache/<service>/<map>_vector)")
	fs.StringVar(&o.id, "id", "", "job id (default: generated)")
	fs.Int64Var(&o.maxFailures, "max-failures", 0, "failure budget in tiles (default 1000)")
	fs.BoolVar(&o.wait, "wait", true, "wait for the job and show progress")
	fs.DurationVar(&o.timeout, "timeout", 24*time.Hour, "time limit for the whole command")
	fs.DurationVar(&o.pollGrace, "poll-grace", defaultPollGrace, "with -wait: how long status polls may keep failing (api or Redis unreachable) before the command gives up; the job carries on meanwhile")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := seed.Request{ID: o.id, Service: o.service, Map: o.mapN, Mode: o.mode, RefreshBefore: o.refreshBefore, MaxFailures: o.maxFailures, Format: o.format}
	var err error
	if req.Levels, err = parseLevels(o.levels); err != nil {
		return err
	}
	if req.Extent, err = parseExtent(o.extent); err != nil {
		return err
	}
	if o.polygon != "" {
		if err := json.Unmarshal([]byte(o.polygon), &req.Polygon); err != nil {
			return fmt.Errorf("polygon: %w", err)
		}
	}
	if o.skipEmpty != "" {
		v, err := strconv.ParseBool(o.skipEmpty)
		if err != nil {
			return fmt.Errorf("skip-empty: %w", err)
		}
		req.SkipEmpty = &v
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cl, stop, err := o.farm.connect(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	var st seed.Status
	if err := cl.do(ctx, http.MethodPost, "/admin/seed", req, &st); err != nil {
		return err
	}
	fmt.Fprintf(out, "job %s submitted: %d tiles in the area of interest\n", st.ID, st.Total)
	if !o.wait && o.farm.server != "" {
		return nil
	}
	return follow(ctx, cl, st.ID, out, stderr, pollTiming{every: 500 * time.Millisecond, grace: o.pollGrace})
}

// defaultPollGrace is how long cachetool seed keeps polling a job whose status cannot be read:
// longer than a Redis Sentinel failover (seconds) or an api restart.
const defaultPollGrace = 2 * time.Minute

// pollTiming is how follow polls: every interval, and, while polls fail, again after a backoff
// that doubles from every up to maxBackoff, for at most grace since the last poll that answered.
type pollTiming struct {
	every, grace time.Duration
}

// maxBackoff bounds the wait between two failed polls.
const maxBackoff = 10 * time.Second

// follow polls a job and draws its progress bar on stderr until the job ends; an interrupt
// cancels the job. A poll that fails transiently (see transient: the api or its Redis away, as
// in a failover) is retried with backoff until timing.grace has passed since the last answer,
// while the job carries on in the farm; only then, or on a refusal such as 404, does follow
// give up.
func follow(ctx context.Context, cl *adminClient, id string, out, stderr io.Writer, timing pollTiming) error {
	bar := &progressBar{w: stderr, width: 30}
	lastAnswer := time.Now()
	backoff := timing.every
	for {
		var st seed.Status
		wait := timing.every
		if err := cl.do(ctx, http.MethodGet, "/admin/seed/"+id, nil, &st); err != nil {
			if ctx.Err() != nil {
				break
			}
			if !transient(err) || time.Since(lastAnswer) >= timing.grace {
				bar.done()
				return fmt.Errorf("job %s: status unknown, the job may still be running (cachetool status): %w", id, err)
			}
			bar.done()
			fmt.Fprintf(stderr, "status poll failed, retrying in %s (for up to %s): %v\n", backoff, timing.grace.Round(time.Second), err)
			wait, backoff = backoff, min(2*backoff, maxBackoff)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
				continue
			}
			break
		}
		lastAnswer, backoff = time.Now(), timing.every
		bar.draw(st)
		if seed.Terminal(st.State) {
			bar.done()
			printStatus(out, st)
			if st.State != seed.StateDone {
				return fmt.Errorf("job %s ended %s: %s", id, st.State, st.Error)
			}
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
			continue
		}
		break
	}
	// Interrupted: cancel the job so the farm stops working on it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var st seed.Status
	if err := cl.do(cctx, http.MethodDelete, "/admin/seed/"+id, nil, &st); err != nil {
		return fmt.Errorf("interrupted; cancelling job %s: %w", id, err)
	}
	bar.done()
	return fmt.Errorf("interrupted: job %s cancelled", id)
}

// progressBar draws "[#####-----]  42.0%  1234/2938 tiles  215 tiles/s  ETA 8s" on one line,
// redrawn with \r.
type progressBar struct {
	w     io.Writer
	width int
	drawn bool
}

func (b *progressBar) draw(st seed.Status) {
	finished := st.Done + st.Failed + st.Empty + st.Kept
	frac := 0.0
	if st.Total > 0 {
		frac = min(1, float64(finished)/float64(st.Total))
	}
	n := int(frac * float64(b.width))
	eta := "--"
	if st.ETASeconds > 0 {
		eta = (time.Duration(st.ETASeconds) * time.Second).String()
	}
	fmt.Fprintf(b.w, "\r[%s%s] %5.1f%%  %d/%d tiles  %d failed  %.0f tiles/s  ETA %s  %s   ",
		strings.Repeat("#", n), strings.Repeat("-", b.width-n), 100*frac, finished, st.Total, st.Failed, st.RatePerSec, eta, st.State)
	b.drawn = true
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

func printStatus(out io.Writer, st seed.Status) {
	fmt.Fprintf(out, "job %s: %s", st.ID, st.State)
	if st.Error != "" {
		fmt.Fprintf(out, " (%s)", st.Error)
	}
	fmt.Fprintf(out, "\n  tiles: %d total, %d rendered, %d empty (skipped), %d kept, %d failed\n", st.Total, st.Done, st.Empty, st.Kept, st.Failed)
	fmt.Fprintf(out, "  bundles: %d planned, %d written, %d failed; planning %s (checkpoint %d %s)\n",
		st.Bundles, st.Merged, st.MergeFailed, map[bool]string{true: "done", false: "in progress"}[st.Planned], st.Checkpoint, st.CheckName)
	fmt.Fprintf(out, "  rate %.1f tiles/s, elapsed %.1fs, ETA %.0fs\n", st.RatePerSec, st.ElapsedSecs, st.ETASeconds)
	if st.Spec != nil {
		fmt.Fprintf(out, "  %s/%s levels %v mode %s root %s\n", st.Spec.Service, st.Spec.Map, st.Spec.Levels, st.Spec.Mode, st.Spec.Root)
	}
}

// statusCmd prints one job's status, or lists recent jobs.
func statusCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cachetool status", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the mapfarm api")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl := newAdminClient(*server, 30*time.Second)
	if fs.NArg() > 0 {
		var st seed.Status
		if err := cl.do(ctx, http.MethodGet, "/admin/seed/"+fs.Arg(0), nil, &st); err != nil {
			return err
		}
		printStatus(out, st)
		return nil
	}
	var list struct {
		Jobs []seed.Status `json:"jobs"`
	}
	if err := cl.do(ctx, http.MethodGet, "/admin/seed", nil, &list); err != nil {
		return err
	}
	for _, st := range list.Jobs {
		fmt.Fprintf(out, "%s  %-9s  %d/%d tiles  %d failed  %s\n", st.ID, st.State, st.Done+st.Empty+st.Kept, st.Total, st.Failed, st.Created)
	}
	return printBacklog(ctx, cl, out, time.Now())
}

// cancelCmd cancels a job.
func cancelCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cachetool cancel", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the mapfarm api")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: cachetool cancel -server URL <job>")
	}
	cl := newAdminClient(*server, 30*time.Second)
	var st seed.Status
	if err := cl.do(ctx, http.MethodDelete, "/admin/seed/"+fs.Arg(0), nil, &st); err != nil {
		return err
	}
	fmt.Fprintf(out, "job %s cancelled (was %s)\n", st.ID, st.State)
	return nil
}
