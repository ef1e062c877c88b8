// Package blob stores rendered images, tiles and cache metadata as named
// objects.
//
// Two stores share one method set: [MinIO] keeps objects in a bucket of a
// MinIO (or other S3-compatible) server and serves the distributed farm;
// [Disk] keeps them as files below a directory and serves the embedded
// single-process default. Consumers should declare the small interface they
// need (often just Put and Get); [Store] names the whole method set for
// convenience and is checked against both types at compile time.
//
// # Keys
//
// A key is a slash-separated path of one or more non-empty segments, such as
// "outputs/2f1c.png" or "caches/World/_alllayers/L03/R0000C0000.bundle".
// Both stores accept the same keys, so code that works on one works on the
// other. A key must be valid UTF-8, at most 1024 bytes, and must not start or
// end with a slash, contain an empty segment ("a//b"), a segment that starts
// with "." (this rules out "." and ".." and reserves dot-names for the stores'
// own bookkeeping), a backslash or a control character. Invalid keys give an
// error wrapping [ErrInvalidKey].
//
// # Errors
//
// A missing object gives an error wrapping [fs.ErrNotExist]; test with
// errors.Is(err, fs.ErrNotExist). Deleting a missing object is not an error.
// A range that starts at or past the end of an object gives an error wrapping
// [ErrInvalidRange]. Errors carry the operation and key, as in
// `blob: get "outputs/x.png": file does not exist`.
//
// # Content types
//
// Put records the content type it is given. An empty content type is replaced
// by the type registered for the key's extension ([mime.TypeByExtension]),
// or "application/octet-stream" when there is none, on both stores.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Store is the full method set that both [MinIO] and [Disk] implement.
type Store interface {
	// Put stores data under key, replacing any existing object atomically:
	// readers see the old object or the new one, never a mix.
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// Get returns the whole object.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns up to n bytes starting at offset off. The result is
	// shorter than n when the object ends first. off must be less than the
	// object's size, else the error wraps ErrInvalidRange. On MinIO it is
	// exactly one ranged GET request.
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Open returns a stream of the object and its Info. The caller must
	// close the stream.
	Open(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat returns the object's Info.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the object. A missing object is not an error.
	Delete(ctx context.Context, key string) error
	// List calls fn for each object whose key starts with prefix (a plain
	// string prefix, not only a directory), in ascending byte order of key.
	// Info from List has Key, Size and ModTime set; ContentType and ETag
	// may be empty (use Stat). If fn returns an error, List stops and
	// returns that error unchanged.
	List(ctx context.Context, prefix string, fn func(Info) error) error
}

// Compile-time checks that both stores implement Store.
var (
	_ Store = (*MinIO)(nil)
	_ Store = (*Disk)(nil)
)

// Info describes a stored object.
type Info struct {
	Key         string
	Size        int64
	ContentType string
	ModTime     time.Time
	// ETag changes whenever the object's content changes. On MinIO it is
	// the server's ETag (the hex MD5 of the content for objects written in
	// one part); on Disk it is the hex MD5 of the content.
	ETag string
}

// ErrInvalidKey is wrapped by errors for keys that break the rules in the
// package documentation.
var ErrInvalidKey = errors.New("invalid key")

// ErrInvalidRange is wrapped by GetRange errors for a negative offset, a
// non-positive length, or an offset at or past the end of the object.
var ErrInvalidRange = errors.New("invalid range")

// maxKeyLen is the longest key accepted, S3's own limit.
const maxKeyLen = 1024

// ValidateKey reports whether key follows the rules in the package
// documentation. The error wraps ErrInvalidKey.
func ValidateKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
	}
	switch {
	case key == "":
		return bad("empty")
	case len(key) > maxKeyLen:
		return bad("longer than 1024 bytes")
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	case strings.HasPrefix(key, "/"):
		return bad("absolute (starts with /)")
	case strings.HasSuffix(key, "/"):
		return bad("ends with /")
	}
	for _, r := range key {
		if r == '\\' {
			return bad("contains a backslash")
		}
		if r < 0x20 || r == 0x7f {
			return bad("contains a control character")
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" {
			return bad("empty path segment")
		}
		if strings.HasPrefix(seg, ".") {
			return bad("path segment starts with a dot")
		}
	}
	return nil
}

// validatePrefix checks a List prefix: empty, or a key that may end in "/".
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidateKey(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	return nil
}

// checkRange validates GetRange arguments that do not depend on the object.
func checkRange(off, n int64) error {
	if off < 0 || n <= 0 {
		return fmt.Errorf("%w: offset %d, length %d", ErrInvalidRange, off, n)
	}
	return nil
}

// defaultContentType is the type recorded when Put is given none.
func defaultContentType(key string) string {
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Lister is the part of a Store that Any needs.
type Lister interface {
	List(ctx context.Context, prefix string, fn func(Info) error) error
}

// errStop ends a listing at the object Any was looking for.
var errStop = errors.New("blob: listing stopped")

// Any reports whether l holds an object whose key starts with prefix and for which match is
// true (every object when match is nil). The listing stops at the first such object.
func Any(ctx context.Context, l Lister, prefix string, match func(Info) bool) (bool, error) {
	err := l.List(ctx, prefix, func(info Info) error {
		if match == nil || match(info) {
			return errStop
		}
		return nil
	})
	switch {
	case errors.Is(err, errStop):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}
