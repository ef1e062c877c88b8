package refresh

import (
	"context"
	"fmt"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// ExpireRequest is an operator's expire (the JSON body of POST /admin/expire): an area of a
// map's cache whose tiles are rendered again by the next refresh job, whatever the cache's
// refresh policy. Exactly one of Extent, Polygon and Tiles may be given; none is the whole
// cache.
type ExpireRequest struct {
	Service string `json:"service"`
	// Map is the map name; empty means the service's default map.
	Map string `json:"map,omitempty"`
	// Extent is [xmin, ymin, xmax, ymax] in the map's SR.
	Extent []float64 `json:"extent,omitempty"`
	// Polygon is rings of [x, y] in the map's SR (the first the outer ring, the others its
	// holes); the tiles it touches at every level of the cache (its tile cover) are expired.
	Polygon [][][2]float64 `json:"polygon,omitempty"`
	// Tiles are [z, x, y] of the cache's tiling scheme (level, column, row from the top, the
	// mod_tile and tegola expire-list form); each tile's area is expired at every level.
	Tiles [][3]int `json:"tiles,omitempty"`
}

// MaxExpireTiles is the most tiles one expire request lists (cachetool expire sends a longer
// list in several requests).
const MaxExpireTiles = 10_000

// ExpireResult is what an expire recorded.
type ExpireResult struct {
	Cache     string `json:"cache"`
	Envelopes int    `json:"envelopes"`
	Polygons  int    `json:"polygons,omitempty"`
	Whole     bool   `json:"whole,omitempty"`
}

// Admin is the operator's side of refresh, as the api's admin endpoints serve it.
type Admin struct {
	Backlog *Backlog
	Catalog *catalog.Catalog
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", seed.ErrBadRequest, quote.Sprintf(format, args...))
}

// Expire records an expire in the cache's backlog; the coordinator's next pass submits its
// refresh job. Errors for a request that cannot be served wrap seed.ErrBadRequest.
func (a *Admin) Expire(ctx context.Context, r ExpireRequest) (ExpireResult, error) {
	svc, ok := a.Catalog.Service(r.Service)
	if !ok {
		return ExpireResult{}, bad("no service %q", r.Service)
	}
	m, ok := svc.Map(r.Map)
	if !ok {
		return ExpireResult{}, bad("service %s has no map %q", svc.Name, r.Map)
	}
	d, err := seed.DrawingOf(m)
	if err != nil {
		return ExpireResult{}, err
	}
	given := 0
	for _, n := range []int{len(r.Extent), len(r.Polygon), len(r.Tiles)} {
		if n > 0 {
			given++
		}
	}
	if given > 1 {
		return ExpireResult{}, bad("give one of extent, polygon and tiles")
	}
	e := Entry{At: time.Now(), Source: "expire", Force: true}
	switch {
	case len(r.Extent) > 0:
		if len(r.Extent) != 4 || r.Extent[2] < r.Extent[0] || r.Extent[3] < r.Extent[1] {
			return ExpireResult{}, bad("extent %v: want [xmin, ymin, xmax, ymax]", r.Extent)
		}
		e.Envelopes = []orb.Bound{{Min: orb.Point{r.Extent[0], r.Extent[1]}, Max: orb.Point{r.Extent[2], r.Extent[3]}}}
	case len(r.Polygon) > 0:
		var pg orb.Polygon
		for _, ring := range r.Polygon {
			if len(ring) < 3 {
				return ExpireResult{}, bad("polygon ring of %d points: want at least 3", len(ring))
			}
			rg := make(orb.Ring, 0, len(ring)+1)
			for _, p := range ring {
				rg = append(rg, orb.Point(p))
			}
			if rg[0] != rg[len(rg)-1] {
				rg = append(rg, rg[0])
			}
			pg = append(pg, rg)
		}
		e.Polygons = []orb.Polygon{pg}
	case len(r.Tiles) > 0:
		if len(r.Tiles) > MaxExpireTiles {
			return ExpireResult{}, bad("%d tiles: at most %d per request", len(r.Tiles), MaxExpireTiles)
		}
		for _, zxy := range r.Tiles {
			t := tilecache.Tile{Level: zxy[0], Col: zxy[1], Row: zxy[2]}
			if !d.Scheme.Contains(t) {
				return ExpireResult{}, bad("tile %d/%d/%d (z/x/y) is not in the cache's tiling scheme (levels %v)", zxy[0], zxy[1], zxy[2], d.Scheme.Levels())
			}
			b, err := d.Scheme.TileBounds(t)
			if err != nil {
				return ExpireResult{}, bad("tile %d/%d/%d: %v", zxy[0], zxy[1], zxy[2], err)
			}
			e.Envelopes = append(e.Envelopes, inset(b))
		}
	default:
		e.Whole = true
	}
	cache := CacheKey(svc.Name, m.Name)
	if err := a.Backlog.Add(ctx, cache, e); err != nil {
		return ExpireResult{}, err
	}
	return ExpireResult{Cache: cache, Envelopes: len(e.Envelopes), Polygons: len(e.Polygons), Whole: e.Whole}, nil
}

// inset shrinks a tile's bound by a millionth of its size on every side, so that at its own
// level it covers that tile only, not the neighbours its edges touch.
func inset(b orb.Bound) orb.Bound {
	dx, dy := (b.Max[0]-b.Min[0])*1e-6, (b.Max[1]-b.Min[1])*1e-6
	return orb.Bound{Min: orb.Point{b.Min[0] + dx, b.Min[1] + dy}, Max: orb.Point{b.Max[0] - dx, b.Max[1] - dy}}
}

// Pending returns every cache's backlog (Backlog.Pending).
func (a *Admin) Pending(ctx context.Context) ([]Waiting, error) { return a.Backlog.Pending(ctx) }
