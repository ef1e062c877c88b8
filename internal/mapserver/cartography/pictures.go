package cartography

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// This file fetches the pictures that request symbols name by PictureUri instead of carrying
// them (PictureMarkerSymbol, PictureFillSymbol), and converts picture symbol details. Pictures
// are resolved in the api, before an operation that draws or reads drawing descriptions runs
// (mapserver.Drawing, its first step): the symbol then carries the bytes, so the task that goes
// to a worker does too and workers fetch nothing.
//
// What is fetched: data: URIs (RFC 2397) always; URLs of this farm's own outputs (OutputURL:
// rendered maps, legend swatches) from the output store; http and https URLs only when their host
// is in PictureOptions.AllowedHosts (config `pictures.allowedHosts`, default none). Every picture
// is at most MaxBytes (1 MiB) and a PNG, JPEG or GIF of at most 1024×1024 pixels (checked from its
// header before decoding); an http fetch is bounded by Timeout (5 s) and follows at most three
// redirects, each to an allowed host. Anything else is a client fault naming the symbol.

// PictureOptions say where pictures named by PictureUri may come from.
type PictureOptions struct {
	// AllowedHosts are the hosts http and https PictureUris may name: "host" (any port) or
	// "host:port", compared without regard to case. Empty: no http(s) URL is fetched.
	AllowedHosts []string
	// MaxBytes bounds one picture; 0 means DefaultPictureBytes.
	MaxBytes int64
	// Timeout bounds one http(s) fetch, redirects included; 0 means DefaultPictureTimeout.
	Timeout time.Duration
	// Transport makes the http(s) requests; nil: http.DefaultTransport.
	Transport http.RoundTripper
}

// Defaults of PictureOptions, and the most picture bytes PictureUris may bring into one request
// (a picture used by many symbols counts once per symbol: each symbol carries it to the worker).
const (
	DefaultPictureBytes   = 1 << 20
	DefaultPictureTimeout = 5 * time.Second
	maxPictureBytesPerReq = 8 << 20
	maxPictureRedirects   = 3
)

func (o PictureOptions) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultPictureBytes
}

func (o PictureOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultPictureTimeout
}

// allowed reports whether an http(s) URL's host may be fetched.
func (o PictureOptions) allowed(u *url.URL) bool {
	for _, h := range o.AllowedHosts {
		h = strings.TrimSpace(h)
		if h != "" && (strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname())) {
			return true
		}
	}
	return false
}

// outputReader reads this farm's outputs (the blob store does).
type outputReader interface {
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// ResolvePictures sets the Picture of every picture symbol anywhere in req that has none but a
// PictureUri, fetched as the file comment says. Errors are client faults.
func (s *Service) ResolvePictures(ctx context.Context, req any) error {
	w := &pictureWalk{ctx: ctx, s: s, fetched: map[string][]byte{}}
	return w.walk(reflect.ValueOf(req), "")
}

type pictureWalk struct {
	ctx     context.Context
	s       *Service
	fetched map[string][]byte
	total   int64
}

var (
	geometryKind = reflect.TypeFor[gisxml.GeometryKind]()
	pointKind    = reflect.TypeFor[gisxml.Point]()
	bytesType    = reflect.TypeFor[[]byte]()
)

// walk visits v (found at path) looking for picture symbols; it skips geometries and byte
// slices, which hold none and may be large.
func (w *pictureWalk) walk(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		switch p := v.Interface().(type) {
		case *gisxml.PictureMarkerSymbol:
			return w.resolve(&p.Picture, p.PictureUri, path)
		case *gisxml.PictureFillSymbol:
			return w.resolve(&p.Picture, p.PictureUri, path)
		}
		if v.Type().Implements(geometryKind) || v.Type().Implements(pointKind) {
			return nil
		}
		return w.walk(v.Elem(), path)
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return w.walk(v.Elem(), path)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Type == bytesType {
				continue
			}
			p := path
			if !f.Anonymous {
				p = path + "/" + f.Name
			}
			if err := w.walk(v.Field(i), p); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		switch v.Type().Elem().Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array:
		default:
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			if err := w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve fetches uri into *pic when the symbol has no picture bytes.
func (w *pictureWalk) resolve(pic *[]byte, uri *string, path string) error {
	if len(*pic) > 0 || uri == nil || strings.TrimSpace(*uri) == "" {
		return nil
	}
	u := strings.TrimSpace(*uri)
	where := strings.TrimPrefix(path, "/") + "/PictureUri"
	b, ok := w.fetched[u]
	if !ok {
		if len(w.fetched) >= 16 {
			return operation.Invalid("%s: a request may name at most 16 different pictures by PictureUri", where)
		}
		var err error
		if b, err = w.s.fetchPicture(w.ctx, u); err != nil {
			return operation.Invalid("%s %s: %v", where, shortURI(u), err)
		}
		w.fetched[u] = b
	}
	if w.total += int64(len(b)); w.total > maxPictureBytesPerReq {
		return operation.Invalid("%s: the pictures named by PictureUri add up to more than %d MiB in this request", where, maxPictureBytesPerReq>>20)
	}
	*pic = b
	return nil
}

// shortURI quotes a URI for a fault, cutting long data: URIs.
func shortURI(u string) string {
	if len(u) > 80 {
		u = u[:77] + "..."
	}
	return fmt.Sprintf("%q", u)
}

// fetchPicture reads the picture a PictureUri names; the error says why it cannot.
func (s *Service) fetchPicture(ctx context.Context, uri string) ([]byte, error) {
	o := s.p.Pictures
	limit := o.maxBytes()
	if rest, ok := strings.CutPrefix(uri, "data:"); ok {
		return dataURI(rest, limit)
	}
	if s.p.OutputURL != nil {
		if name, ok := strings.CutPrefix(uri, s.p.OutputURL("outputs/")); ok {
			return s.ownOutput(ctx, name, limit)
		}
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not a data: URI, a URL of this server's outputs or an http(s) URL")
	}
	if !o.allowed(u) {
		return nil, fmt.Errorf("host %s is not an allowed picture host (configuration pictures.allowedHosts)", u.Host)
	}
	return o.get(ctx, u, limit)
}

// dataURI decodes the part of an RFC 2397 data: URI after "data:".
func dataURI(rest string, limit int64) ([]byte, error) {
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data: URI without a comma")
	}
	if int64(len(data)) > limit*3+4 { // base64 is 4/3 of the bytes, percent-encoding at most 3×
		return nil, fmt.Errorf("picture larger than %d bytes", limit)
	}
	var b []byte
	var err error
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		data = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, data)
		if b, err = base64.StdEncoding.DecodeString(data); err != nil {
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
		}
	} else {
		var s string
		s, err = url.PathUnescape(data)
		b = []byte(s)
	}
	if err != nil {
		return nil, fmt.Errorf("data: URI: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("picture larger than %d bytes", limit)
	}
	return b, nil
}

// ownOutput reads one of this farm's outputs by its name in an output URL.
func (s *Service) ownOutput(ctx context.Context, name string, limit int64) ([]byte, error) {
	name, _, _ = strings.Cut(name, "?")
	if name == "" || strings.ContainsAny(name, "/\\#") || strings.Contains(name, "..") {
		return nil, errors.New("not the URL of an output of this server")
	}
	r, ok := s.p.Outputs.(outputReader)
	if !ok {
		return nil, errors.New("this server keeps no outputs to read pictures from")
	}
	b, err := r.GetRange(ctx, "outputs/"+name, 0, limit+1)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such output (outputs expire)")
	case err != nil:
		return nil, fmt.Errorf("read output: %w", err)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("picture larger than %d bytes", limit)
	}
	return b, nil
}

// get fetches an http(s) URL of an allowed host, at most limit bytes.
func (o PictureOptions) get(ctx context.Context, u *url.URL, limit int64) ([]byte, error) {
	client := &http.Client{
		Transport: o.Transport,
		Timeout:   o.timeout(),
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) > maxPictureRedirects {
				return fmt.Errorf("more than %d redirects", maxPictureRedirects)
			}
			if (r.URL.Scheme != "http" && r.URL.Scheme != "https") || !o.allowed(r.URL) {
				return fmt.Errorf("redirected to %s, which is not an allowed picture host", r.URL.Host)
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "image/png, image/jpeg, image/gif")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch: %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("picture of %d bytes is larger than %d bytes", resp.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("picture larger than %d bytes", limit)
	}
	return b, nil
}

// checkPicture checks a picture symbol's image (ResolvePictures has fetched a PictureUri into
// pic); what names the symbol.
func checkPicture(pic []byte, uri *string, what string) error {
	if len(pic) == 0 {
		if uri != nil && strings.TrimSpace(*uri) != "" {
			return operation.Invalid("%s/PictureUri: the picture was not fetched", what)
		}
		return operation.Invalid("%s: a picture symbol needs its Picture bytes or a PictureUri", what)
	}
	if err := mapdraw.CheckPicture(pic); err != nil {
		return operation.Invalid("%s/Picture: %v", what, err)
	}
	return nil
}

// pictureStyleIn reads a picture symbol's colours: the foreground of a two-colour picture is
// FgColor, else the symbol's Color when given (ArcObjects' IPictureFillSymbol.Color).
func pictureStyleIn(ps *symbology.PictureStyle, fg, col, bg, trans gisxml.Color, swap *bool, what string) error {
	opt := func(c gisxml.Color, name string) (*symbology.Color, error) {
		if c == nil {
			return nil, nil
		}
		v, err := colorIn(c, symbology.Color{})
		if err != nil {
			return nil, operation.Invalid("%s/%s: %v", what, name, err)
		}
		return &v, nil
	}
	var err error
	if fg == nil {
		fg = col
	}
	if ps.FgColor, err = opt(fg, "FgColor"); err != nil {
		return err
	}
	if ps.BgColor, err = opt(bg, "BgColor"); err != nil {
		return err
	}
	if ps.TransparentColor, err = opt(trans, "BitmapTransColor"); err != nil {
		return err
	}
	ps.Swap1Bit = swap != nil && *swap
	return nil
}

// checkPictureSizes bounds a picture symbol's height, separations (points) and scales.
func checkPictureSizes(ps *symbology.PictureStyle, what string) error {
	for _, c := range []struct {
		v    float64
		name string
	}{{ps.Height, "Height"}, {ps.XSeparation, "XSeparation"}, {ps.YSeparation, "YSeparation"}} {
		if err := checkSize(c.v, what+"/"+c.name); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		v    float64
		name string
	}{{ps.XScale, "XScale"}, {ps.YScale, "YScale"}} {
		if !(c.v >= 0 && c.v <= maxPictureScale) {
			return operation.Invalid("%s/%s %g must be between 0 and %d", what, c.name, c.v, maxPictureScale)
		}
	}
	return nil
}

// maxPictureScale bounds XScale and YScale of picture symbols.
const maxPictureScale = 100

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
