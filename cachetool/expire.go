package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/refresh"
)

// expireCmd records an expire of an area of a map's cache (POST /admin/expire): by extent,
// by polygon, or by a tile list in the mod_tile/tegola form (one z/x/y a line). The farm's
// coordinator renders the area's stored tiles again in its next refresh job, whatever the
// cache's refresh policy.
func expireCmd(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("cachetool expire", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the mapfarm api")
	service := fs.String("service", "", "map service (required)")
	mapName := fs.String("map", "", "map name (default: the service's default map)")
	extent := fs.String("extent", "", "area to expire: xmin,ymin,xmax,ymax in the map's spatial reference")
	polygon := fs.String("polygon", "", `area to expire: one ring "x,y x,y x,y ..." in the map's spatial reference (the tiles it touches at every level are expired)`)
	tiles := fs.String("tiles", "", "file of tiles to expire, one z/x/y a line (mod_tile/tegola expire list); - reads stdin")
	timeout := fs.Duration("timeout", 60*time.Second, "time limit for each request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *service == "" {
		return errors.New("expire: -service is required")
	}
	cl := newAdminClient(*server, *timeout)
	req := refresh.ExpireRequest{Service: *service, Map: *mapName}
	var err error
	switch {
	case *extent != "":
		if req.Extent, err = parseExtent(*extent); err != nil {
			return err
		}
	case *polygon != "":
		if req.Polygon, err = parseRing(*polygon); err != nil {
			return err
		}
	case *tiles != "":
		return expireTiles(ctx, cl, req, *tiles, stdin, out)
	}
	var res refresh.ExpireResult
	if err := cl.do(ctx, http.MethodPost, "/admin/expire", req, &res); err != nil {
		return err
	}
	printExpired(out, res, 1)
	return nil
}

func printExpired(out io.Writer, res refresh.ExpireResult, requests int) {
	if res.Whole {
		fmt.Fprintf(out, "expired the whole cache of %s; the coordinator's next refresh job renders it again\n", res.Cache)
		return
	}
	fmt.Fprintf(out, "expired %d areas of %s in %d request(s); the coordinator's next refresh job renders them again\n", res.Envelopes+res.Polygons, res.Cache, requests)
}

// expireTiles sends a tile list in requests of at most refresh.MaxExpireTiles tiles.
func expireTiles(ctx context.Context, cl *adminClient, req refresh.ExpireRequest, path string, stdin io.Reader, out io.Writer) error {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("expire: %w", err)
		}
		defer f.Close()
		in = f
	}
	total, requests := 0, 0
	var res refresh.ExpireResult
	send := func() error {
		if len(req.Tiles) == 0 {
			return nil
		}
		if err := cl.do(ctx, http.MethodPost, "/admin/expire", req, &res); err != nil {
			return err
		}
		total += len(req.Tiles)
		requests++
		req.Tiles = req.Tiles[:0]
		return nil
	}
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		zxy, err := parseZXY(line)
		if err != nil {
			return fmt.Errorf("expire: %s line %d: %w", path, n, err)
		}
		req.Tiles = append(req.Tiles, zxy)
		if len(req.Tiles) == refresh.MaxExpireTiles {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("expire: %s: %w", path, err)
	}
	if err := send(); err != nil {
		return err
	}
	if requests == 0 {
		return fmt.Errorf("expire: %s lists no tile", path)
	}
	res.Envelopes = total
	printExpired(out, res, requests)
	return nil
}

// parseZXY reads "z/x/y" (level, column, row).
func parseZXY(s string) ([3]int, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return [3]int{}, fmt.Errorf("%q: want z/x/y", s)
	}
	var out [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 {
			return [3]int{}, fmt.Errorf("%q: want z/x/y of non-negative integers", s)
		}
		out[i] = v
	}
	return out, nil
}

// parseRing reads "x,y x,y x,y ..." into one ring.
func parseRing(s string) ([][][2]float64, error) {
	var ring [][2]float64
	for _, pt := range strings.Fields(s) {
		xs, ys, ok := strings.Cut(pt, ",")
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("polygon point %q: want x,y", pt)
		}
		ring = append(ring, [2]float64{x, y})
	}
	if len(ring) < 3 {
		return nil, fmt.Errorf("polygon %q: want at least 3 points", s)
	}
	return [][][2]float64{ring}, nil
}

// printBacklog prints every cache's refresh backlog (GET /admin/refresh).
func printBacklog(ctx context.Context, cl *adminClient, out io.Writer, now time.Time) error {
	var b struct {
		Backlog []refresh.Waiting `json:"backlog"`
	}
	if err := cl.do(ctx, http.MethodGet, "/admin/refresh", nil, &b); err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return nil // an api without the refresh routes
		}
		return err
	}
	if len(b.Backlog) == 0 {
		fmt.Fprintln(out, "refresh backlog: empty")
		return nil
	}
	fmt.Fprintln(out, "refresh backlog:")
	for _, w := range b.Backlog {
		fmt.Fprintf(out, "  %s  %d areas waiting, oldest %s old", w.Cache, w.Entries, now.Sub(w.Oldest).Round(time.Second))
		if w.Whole {
			fmt.Fprint(out, ", the whole cache")
		}
		if w.Forced {
			fmt.Fprint(out, ", expired (due)")
		}
		if !w.LastJob.IsZero() {
			fmt.Fprintf(out, ", last refresh job %s ago", now.Sub(w.LastJob).Round(time.Second))
		}
		fmt.Fprintln(out)
	}
	return nil
}
