package queries

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
)

// publishFunc stores bytes and returns the URL they are served at.
type publishFunc func(data []byte, contentType string) (string, error)

// publisher returns how this call hands out bytes by URL (attachments, raster values): written
// to the object store under outputs/ with a fresh unguessable name, beside rendered images,
// served by the api and expired by the coordinator (and remembered for immediate serving). A
// server without a store (unit tests) hands out RFC 2397 data: URLs instead.
func (s *Service) publisher(ctx context.Context) publishFunc {
	store := s.p.Outputs
	return func(data []byte, contentType string) (string, error) {
		if store == nil || s.p.OutputURL == nil || s.p.NewID == nil {
			return "data:" + contentType + ";base64," + base64.StdEncoding.EncodeToString(data), nil
		}
		ext := ".bin"
		if exts, _ := mime.ExtensionsByType(contentType); len(exts) > 0 {
			ext = exts[0]
		}
		key := "outputs/" + s.p.NewID() + ext
		if err := store.Put(ctx, key, data, contentType); err != nil {
			return "", fmt.Errorf("store output: %w", err)
		}
		if s.p.Recent != nil {
			s.p.Recent.Remember(key, contentType, data)
		}
		return s.p.OutputURL(key), nil
	}
}
