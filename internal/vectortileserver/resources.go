package vectortileserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
	"github.com/mapfarm/mapfarm/internal/vectorsprite"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

// resourceCacheControl lets clients keep the style, glyphs and sprites for an hour: they change
// only with the service definition, when the farm restarts.
const resourceCacheControl = "public, max-age=3600"

// resourceKey names a resource made once per service: the style, or a sprite sheet's PNG or
// index at a pixel ratio.
type resourceKey struct {
	service, name string
}

// resource is a made resource, or the error of making it.
type resource struct {
	once        sync.Once
	data        []byte
	contentType string
	err         error
}

// made returns the resource named key, made by build once; the service definitions never change
// while the process runs.
func (h *Handler) made(key resourceKey, build func() ([]byte, string, error)) (*resource, error) {
	h.mu.Lock()
	res, ok := h.resources[key]
	if !ok {
		res = &resource{}
		h.resources[key] = res
	}
	h.mu.Unlock()
	res.once.Do(func() { res.data, res.contentType, res.err = build() })
	return res, res.err
}

func (h *Handler) serveMade(w http.ResponseWriter, r *http.Request, res *resource) {
	writeOK(w, r, res.contentType, resourceCacheControl, res.data)
}

// serveStyle answers resources/styles and resources/styles/root.json: the Mapbox GL style of the
// service's default map, its source, glyphs and sprite absolute URLs under the service. A style
// asked for with a token parameter names the same token in those URLs, so that a client given
// only the style's URL (MapLibre) can fetch what it names from a farm that needs tokens; it is
// made for the request, not kept (the request policy marks the answer private).
func (h *Handler) serveStyle(w http.ResponseWriter, r *http.Request, svc *catalog.Service) {
	style := func(token string) ([]byte, string, error) {
		st, err := vectorstyle.New(svc.Def, svc.DefaultMap().Def, vectorstyle.Options{ServiceURL: h.serviceURL(svc), MaxZoom: h.p.Builder.MaxZoom()})
		if err != nil {
			return nil, "", err
		}
		if token != "" {
			q := "?token=" + url.QueryEscape(token)
			for name, src := range st.Sources {
				for i := range src.Tiles {
					src.Tiles[i] += q
				}
				st.Sources[name] = src
			}
			st.Glyphs += q
			st.Sprite += q
		}
		b, err := st.JSON()
		return b, "application/json; charset=utf-8", err
	}
	if token := r.URL.Query().Get("token"); token != "" {
		b, ct, err := style(token)
		if err != nil {
			h.failed(w, r, "the style", err)
			return
		}
		h.serveMade(w, r, &resource{data: b, contentType: ct})
		return
	}
	res, err := h.made(resourceKey{service: strings.ToLower(svc.Name), name: "style"}, func() ([]byte, string, error) { return style("") })
	if err != nil {
		h.failed(w, r, "the style", err)
		return
	}
	h.serveMade(w, r, res)
}

// serveGlyphs answers resources/fonts/<stack>/<range>.pbf.
func (h *Handler) serveGlyphs(w http.ResponseWriter, r *http.Request, stack, rng string) {
	data, err := h.p.Glyphs.Range(r.Context(), stack, rng)
	if errors.Is(err, vectorfonts.ErrBadRequest) {
		writeError(w, http.StatusBadRequest, "Invalid URL", err.Error())
		return
	}
	if err != nil {
		h.failed(w, r, "the glyph range", err)
		return
	}
	writeOK(w, r, "application/x-protobuf", resourceCacheControl, data)
}

// serveSprite answers resources/sprites/sprite.json, sprite.png, sprite@2x.json and
// sprite@2x.png: the markers of the default map's icon layers (vectorstyle.Icons).
func (h *Handler) serveSprite(w http.ResponseWriter, r *http.Request, svc *catalog.Service, name string) {
	var ratio int
	var ext string
	switch name {
	case "sprite.json", "sprite.png":
		ratio, ext = 1, strings.TrimPrefix(name, "sprite.")
	case "sprite@2x.json", "sprite@2x.png":
		ratio, ext = 2, strings.TrimPrefix(name, "sprite@2x.")
	default:
		writeError(w, http.StatusNotFound, "Requested path was not found", "the sprites are sprite.json, sprite.png, sprite@2x.json and sprite@2x.png, not "+quoted(name))
		return
	}
	sheet := func(ctx context.Context) (*vectorsprite.Sheet, error) {
		return vectorsprite.Draw(ctx, h.p.Renderer, vectorstyle.Icons(svc.DefaultMap().Def), ratio)
	}
	key := resourceKey{service: strings.ToLower(svc.Name), name: name}
	res, err := h.made(key, func() ([]byte, string, error) {
		// Drawn once for every later request, so not bound to this one's context.
		s, err := sheet(context.WithoutCancel(r.Context()))
		if err != nil {
			return nil, "", fmt.Errorf("sprite sheet at %dx: %w", ratio, err)
		}
		if ext == "png" {
			return s.PNG, "image/png", nil
		}
		b, err := s.JSON()
		return b, "application/json; charset=utf-8", err
	})
	if err != nil {
		h.failed(w, r, "the sprite sheet", err)
		return
	}
	h.serveMade(w, r, res)
}
