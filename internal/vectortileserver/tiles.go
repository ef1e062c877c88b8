package vectortileserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/onewrite"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// ThinnedHeader is the header of a tile thinned at the feature limit: its value is the limit.
const ThinnedHeader = "X-Tile-Thinned"

// tileKey names a served tile.
type tileKey struct {
	service string
	z, y, x int
}

// servedTile is a tile as it is sent: gzip-compressed, with its ETag, and the header values
// of both.
type servedTile struct {
	data         []byte // gzip-compressed
	etag         string
	etagHeader   []string
	lengthHeader []string
	thinned      int // the feature limit when the tile was thinned, else 0
	at           time.Time
}

// serveTile answers tile/<z>/<y>/<x>.pbf.
func (h *Handler) serveTile(w http.ResponseWriter, r *http.Request, svc *catalog.Service, zs, ys, xs string) {
	var at [3]int
	for i, s := range []string{zs, ys, xs} {
		n, ok := tilecache.ParseIndex(s)
		if !ok {
			writeError(w, http.StatusBadRequest, "Invalid URL", "a tile's level, row and column are whole numbers ≥ 0 written in digits alone, not "+quoted(s))
			return
		}
		at[i] = n
	}
	z, y, x := at[0], at[1], at[2]
	if z > h.p.Builder.MaxZoom() || y >= 1<<z || x >= 1<<z {
		writeError(w, http.StatusNotFound, "Tile not found", fmt.Sprintf("tile %d/%d/%d is outside levels 0 to %d of the tiling scheme", z, y, x, h.p.Builder.MaxZoom()))
		return
	}
	k := tileKey{service: strings.ToLower(svc.Name), z: z, y: y, x: x}
	t, err := h.tile(r.Context(), svc, k)
	if err != nil {
		h.failed(w, r, "the tile", err)
		return
	}
	// A hit is the commonest answer: its header shares the tile's own value slices and the
	// handler's, one element each (so an Add elsewhere copies them), allocating nothing.
	hd := w.Header()
	hd["Etag"] = t.etagHeader
	hd["Cache-Control"] = h.cacheControl
	if v := hd["Vary"]; len(v) == 0 {
		hd["Vary"] = varyEncoding
	} else {
		hd["Vary"] = append(v, "Accept-Encoding")
	}
	if t.thinned > 0 {
		hd[ThinnedHeader] = []string{strconv.Itoa(t.thinned)}
	}
	if etagMatch(r.Header["If-None-Match"], t.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	data, length := t.data, t.lengthHeader
	if acceptsGzip(r.Header["Accept-Encoding"]) {
		hd["Content-Encoding"] = gzipEncoding
	} else if data, err = gunzip(data); err != nil {
		h.failed(w, r, "inflating the tile", err)
		return
	} else {
		length = []string{strconv.Itoa(len(data))}
	}
	hd["Content-Type"] = protobufType
	hd["Content-Length"] = length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_ = onewrite.Write(w, r, data) // header and tile in one write system call
	}
}

// The header values every tile answer shares; one element each, never written in place.
var (
	gzipEncoding = []string{"gzip"}
	varyEncoding = []string{"Accept-Encoding"}
	protobufType = []string{"application/x-protobuf"}
)

// tile returns a tile from the memory, a seeded cache or the builder, in this order; one
// request builds a tile that several ask for at once.
func (h *Handler) tile(ctx context.Context, svc *catalog.Service, k tileKey) (*servedTile, error) {
	now := time.Now()
	if h.memory != nil {
		if t, ok := h.memory.Get(k); ok && now.Sub(t.at) <= h.p.MemoryMaxAge {
			return t, nil
		}
	}
	ch := h.flight.DoChan(fmt.Sprintf("%s/%d/%d/%d", k.service, k.z, k.y, k.x), func() (any, error) {
		// Built for every request waiting, so not bound to the first one's context.
		bctx := context.WithoutCancel(ctx)
		if h.p.Timeout > 0 {
			var cancel context.CancelFunc
			bctx, cancel = context.WithTimeout(bctx, h.p.Timeout)
			defer cancel()
		}
		gen := h.forgets.Load()
		t, err := h.load(bctx, svc, k)
		if err != nil {
			return nil, err
		}
		// A tile read or built while an invalidation arrived may hold the data of before it:
		// served to the requests waiting, not kept.
		if h.memory != nil && len(t.data) <= int(h.p.MemoryBytes/8) && h.forgets.Load() == gen {
			h.memory.Add(k, t, int64(len(t.data)+len(t.etag)+64))
		}
		return t, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*servedTile), nil
	}
}

// load reads a tile from a seeded cache or builds it.
func (h *Handler) load(ctx context.Context, svc *catalog.Service, k tileKey) (*servedTile, error) {
	mapName := svc.DefaultMap().Name
	if h.p.Stored != nil {
		data, ok, err := h.p.Stored.VectorTile(ctx, svc.Name, mapName, k.z, k.y, k.x)
		if err != nil {
			return nil, fmt.Errorf("reading the seeded tile: %w", err)
		}
		if ok {
			if !isGzip(data) {
				if data, err = mvt.Gzip(data); err != nil {
					return nil, err
				}
			}
			return tagged(data, 0), nil
		}
	}
	var res *mvt.Result
	var err error
	build := func() { res, err = h.p.Builder.WebMercatorTile(ctx, svc.Name, mapName, k.z, k.x, k.y) }
	if h.p.Run != nil {
		h.p.Run(build)
	} else {
		build()
	}
	if err != nil {
		return nil, err
	}
	data := res.Data
	if !res.Gzipped {
		if data, err = mvt.Gzip(data); err != nil {
			return nil, err
		}
	}
	thinned := 0
	if res.Thinned {
		thinned = h.p.Builder.Options().MaxFeatures
	}
	return tagged(data, thinned), nil
}

// tagged is a served tile of data with its ETag, the hash of its bytes.
func tagged(data []byte, thinned int) *servedTile {
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return &servedTile{data: data, etag: etag, etagHeader: []string{etag}, lengthHeader: []string{strconv.Itoa(len(data))},
		thinned: thinned, at: time.Now()}
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// gunzip inflates a tile for a client that does not take gzip; the encoder bounds a tile's size
// (mvt.DefaultMaxBytes unless set), and the reader is bounded anyway (a seeded tile).
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// acceptsGzip reports whether Accept-Encoding values take gzip (or *), not with q=0.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for v != "" {
			var part string
			part, v, _ = strings.Cut(v, ",")
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.TrimSpace(name)
			if !strings.EqualFold(name, "gzip") && name != "*" {
				continue
			}
			q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
			if f, err := strconv.ParseFloat(strings.TrimSpace(q), 64); ok && err == nil && f == 0 {
				return false
			}
			return true
		}
	}
	return false
}

// etagMatch reports whether If-None-Match values name etag (weak comparison) or are "*".
func etagMatch(values []string, etag string) bool {
	for _, v := range values {
		for v != "" {
			var tag string
			tag, v, _ = strings.Cut(v, ",")
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}

// isLimit reports whether a tile failed at a limit of the encoder: the byte limit
// (mvt.ErrTooLarge) or the time limit. It is a fault of the data at that zoom, answered 500 with
// the limit named (docs/limits.md).
func isLimit(err error) bool {
	return errors.Is(err, mvt.ErrTooLarge) || errors.Is(err, context.DeadlineExceeded)
}

// ForgetTiles drops from the memory the served tiles of a map's vector tiles that v names:
// v's root is the map's vector cache root (seed.VectorCacheRoot: "arcgiscache/<service>/<map>"
// + VectorCacheSuffix), the map the service's default one (the map its VectorTileServer
// serves), and v covers the tile in the fused folder. Tiles built on demand and tiles read
// from a seeded cache are dropped alike. internal/app calls it for every message of the
// invalidation channel (docs/freshness.md).
func (h *Handler) ForgetTiles(v refresh.Invalidation) {
	if h.memory == nil {
		return
	}
	rest, ok := strings.CutPrefix(v.Root, "arcgiscache/")
	if !ok {
		return
	}
	if rest, ok = strings.CutSuffix(rest, VectorCacheSuffix); !ok {
		return
	}
	service, mapName, ok := strings.Cut(rest, "/")
	if !ok || h.p.Services == nil {
		return
	}
	svc, ok := h.p.Services.Service(service)
	if !ok || svc.DefaultMap() == nil || !strings.EqualFold(svc.DefaultMap().Name, mapName) {
		return
	}
	h.forgets.Add(1)
	name := strings.ToLower(svc.Name)
	h.memory.RemoveIf(func(k tileKey) bool {
		return k.service == name && v.Covers(tilecache.FusedLayer, tilecache.Tile{Level: k.z, Row: k.y, Col: k.x})
	})
}
