package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// OutputPrefix is the store prefix rendered images are written under; the coordinator removes
// them when they expire.
const OutputPrefix = "outputs/"

// OutputURL returns the public URL of a stored output.
func OutputURL(publicURL, key string) string {
	return publicURL + "/arcgis/output/" + strings.TrimPrefix(key, OutputPrefix)
}

// serveOutput streams a rendered image while it has not expired. Names are 128-bit random ids,
// so a URL cannot be guessed.
func (s *Server) serveOutput(c *gin.Context) {
	name := c.Param("name")
	if !validOutputName(name) {
		c.String(http.StatusNotFound, "no such output\n")
		return
	}
	if id, _, _ := strings.Cut(name, "."); s.p.OutputIDs != nil && !s.p.OutputIDs.Valid(id) {
		c.String(http.StatusNotFound, "no such output\n") // never issued: the store is not asked
		return
	}
	if o, ok := s.recent.get(OutputPrefix + name); ok {
		h := c.Writer.Header()
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(s.p.OutputTTL.Seconds())))
		c.Data(http.StatusOK, o.contentType, o.data)
		return
	}
	rc, info, err := s.openOutput(c.Request.Context(), OutputPrefix+name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.String(http.StatusNotFound, "no such output (outputs expire after %s)\n", s.p.OutputTTL)
		return
	case err != nil && clientGone(c, err):
		s.p.Logger.Info("client went away before the output was read", "request_id", requestIDOf(c), "key", name)
		c.AbortWithStatus(statusClientClosed)
		return
	case err != nil:
		s.p.Logger.Error("open output", "request_id", requestIDOf(c), "key", name, "err", err)
		c.String(http.StatusServiceUnavailable, "output store unavailable\n")
		return
	}
	defer rc.Close()
	if !info.ModTime.IsZero() && time.Since(info.ModTime) > s.p.OutputTTL {
		c.String(http.StatusNotFound, "no such output (outputs expire after %s)\n", s.p.OutputTTL)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", info.ContentType)
	h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(s.p.OutputTTL.Seconds())))
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(c.Writer, rc); err != nil {
		s.p.Logger.Warn("send output (the client may have gone away)", "request_id", requestIDOf(c), "key", name, "err", err)
	}
}

// validOutputName reports whether name can name an output: an id of 1 to 64 letters, digits,
// '_' and '-', a dot and an extension of 1 to 8 letters and digits (what the api writes:
// "<128-bit hex id>.png"). Anything else is not looked for in the store.
func validOutputName(name string) bool {
	id, ext, ok := strings.Cut(name, ".")
	if !ok || len(id) == 0 || len(id) > 64 || len(ext) == 0 || len(ext) > 8 {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
		switch {
		case alnum, i == len(id):
		case i < len(id) && (ch == '_' || ch == '-'):
		default:
			return false
		}
	}
	return true
}

// openOutput opens a stored output. A fresh image rendered for another api replica may still be
// on its way to the store, so a missing one is looked for again for a short, bounded while.
// An id stored under another extension is not on its way: it is answered at once.
func (s *Server) openOutput(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	deadline := time.Now().Add(2 * time.Second)
	for first := true; ; first = false {
		rc, info, err := s.p.Outputs.Open(ctx, key)
		if !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			return rc, info, err
		}
		// A listing that fails costs only the wait: the output is looked for as before.
		if first {
			if other, _ := s.storedAsOther(ctx, key); other {
				return nil, blob.Info{}, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, blob.Info{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// storedAsOther reports whether the output id of key ("outputs/<id>.<ext>") is stored under
// another name: another extension than the one asked for.
func (s *Server) storedAsOther(ctx context.Context, key string) (bool, error) {
	stem, _, _ := strings.Cut(key[len(OutputPrefix):], ".")
	found, err := blob.Any(ctx, s.p.Outputs, OutputPrefix+stem+".", func(info blob.Info) bool { return info.Key != key })
	if err != nil {
		return false, fmt.Errorf("list outputs of %s: %w", stem, err)
	}
	return found, nil
}

// healthz says the process is alive.
func (s *Server) healthz(c *gin.Context) { c.String(http.StatusOK, "ok\n") }

// readyz says whether the dependencies answer.
func (s *Server) readyz(c *gin.Context) {
	if s.p.Ready != nil {
		if err := s.p.Ready(c.Request.Context()); err != nil {
			c.String(http.StatusServiceUnavailable, "not ready: %v\n", err)
			return
		}
	}
	c.String(http.StatusOK, "ready\n")
}
