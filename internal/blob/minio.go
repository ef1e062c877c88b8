package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"strings"

	"github.com/mapfarm/mapfarm/internal/config"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// MinIOConfig configures a MinIO store.
type MinIOConfig struct {
	// Endpoint is the server's host:port. A leading "http://" or
	// "https://" is accepted and sets UseSSL accordingly.
	Endpoint  string
	AccessKey string
	SecretKey string
	Bucket    string
	UseSSL    bool
	// Region of the bucket. Empty lets the client ask the server once per
	// bucket; MinIO's default region is "us-east-1".
	Region string
	// CreateBucket creates the bucket when it does not exist. Without it,
	// NewMinIO fails if the bucket is missing.
	CreateBucket bool
	// CAFile is a PEM file of the certificate authorities the server's
	// certificate is checked against over https (a private CA), instead of
	// the system's roots. Only with the default transport.
	CAFile string
	// Transport, if set, carries the HTTP requests (for tracing or tests).
	// Nil uses minio-go's default transport with a larger pool of idle
	// connections (MaxIdleConnsPerHost 256 instead of 16), so that an api
	// reading many tiles at once keeps its connections instead of opening
	// and closing one per request beyond the sixteenth.
	Transport http.RoundTripper
	// MaxRetries bounds minio-go's own retries of a failed request (with
	// backoff). Zero keeps minio-go's default of 10, which can hold a caller
	// for seconds while the server is down; the farm uses 2, because its
	// tasks are retried by the queue and its api should fail fast.
	MaxRetries int
}

// idleConns is how many idle connections to the server the default
// transport keeps.
const idleConns = 256

// MinIO is a Store backed by one bucket of a MinIO or other S3-compatible
// server. Keys are object names. It is safe for concurrent use.
type MinIO struct {
	core   *minio.Core
	bucket string
}

// NewMinIO connects to the server, checks that the bucket exists (creating
// it if cfg.CreateBucket is set) and returns the store. The check is one
// request, so a wrong endpoint or credentials fail here rather than later.
func NewMinIO(ctx context.Context, cfg MinIOConfig) (*MinIO, error) {
	endpoint, secure := cfg.Endpoint, cfg.UseSSL
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		endpoint, secure = rest, true
	} else if rest, ok := strings.CutPrefix(endpoint, "http://"); ok {
		endpoint, secure = rest, false
	}
	endpoint = strings.TrimSuffix(endpoint, "/")
	if endpoint == "" {
		return nil, errors.New("blob: minio: endpoint is empty")
	}
	if cfg.Bucket == "" {
		return nil, errors.New("blob: minio: bucket is empty")
	}
	transport := cfg.Transport
	if transport == nil {
		tr, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, fmt.Errorf("blob: minio %s: %w", endpoint, err)
		}
		tr.MaxIdleConns = max(tr.MaxIdleConns, idleConns)
		tr.MaxIdleConnsPerHost = idleConns
		if cfg.CAFile != "" {
			if !secure {
				return nil, fmt.Errorf("blob: minio %s: a CA file is set but the endpoint is plain http (set UseSSL)", endpoint)
			}
			pool, err := config.CertPool(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("blob: minio %s: CA file: %w", endpoint, err)
			}
			tr.TLSClientConfig.RootCAs = pool
		}
		transport = tr
	} else if cfg.CAFile != "" {
		return nil, fmt.Errorf("blob: minio %s: a CA file and a transport of the caller's are both set", endpoint)
	}
	core, err := minio.NewCore(endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:     secure,
		Region:     cfg.Region,
		Transport:  transport,
		MaxRetries: cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: minio %s: %w", endpoint, err)
	}
	exists, err := core.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blob: minio %s: bucket %q: %w", endpoint, cfg.Bucket, err)
	}
	if !exists {
		if !cfg.CreateBucket {
			return nil, fmt.Errorf("blob: minio %s: bucket %q does not exist", endpoint, cfg.Bucket)
		}
		err := core.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if err != nil {
			// Another process may have created it meanwhile.
			code := minio.ToErrorResponse(err).Code
			if code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
				return nil, fmt.Errorf("blob: minio %s: create bucket %q: %w", endpoint, cfg.Bucket, err)
			}
		}
	}
	return &MinIO{core: core, bucket: cfg.Bucket}, nil
}

// Bucket returns the bucket the store writes to.
func (m *MinIO) Bucket() string { return m.bucket }

// mapErr translates S3 error codes into the package's sentinel errors,
// keeping the original error in the chain.
func mapErr(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey":
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	case "InvalidRange":
		return fmt.Errorf("%w (%w)", ErrInvalidRange, err)
	}
	return err
}

func objectInfo(key string, oi minio.ObjectInfo) Info {
	return Info{
		Key:         key,
		Size:        oi.Size,
		ContentType: oi.ContentType,
		ModTime:     oi.LastModified,
		ETag:        strings.Trim(oi.ETag, `"`),
	}
}

// Put implements Store. Objects up to 16 MiB are written in one request.
func (m *MinIO) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	if contentType == "" {
		contentType = defaultContentType(key)
	}
	_, err := m.core.Client.PutObject(ctx, m.bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return fmt.Errorf("blob: put %q: %w", key, mapErr(err))
	}
	return nil
}

// Get implements Store.
func (m *MinIO) Get(ctx context.Context, key string) ([]byte, error) {
	rc, info, err := m.open(ctx, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("blob: get %q: %w", key, err)
	}
	defer rc.Close()
	b, err := readBody(rc, info.Size, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("blob: get %q: %w", key, err)
	}
	return b, nil
}

// readBody reads a response body of announced length size (negative:
// unknown), at most limit bytes. With a known size it reads into one slice
// of exactly that size (bytes.Buffer.ReadFrom would grow a full buffer once
// more, copying it, to make room for a read that finds the end).
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	if size < 0 || size > limit {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(io.LimitReader(r, limit)); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	b := make([]byte, size)
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("body ended after %d of %d bytes: %w", n, size, err)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// GetRange implements Store with exactly one ranged GET request.
func (m *MinIO) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := m.getRange(ctx, key, off, n)
	if err != nil {
		return nil, fmt.Errorf("blob: get range %q [%d, +%d): %w", key, off, n, err)
	}
	return b, nil
}

func (m *MinIO) getRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := checkRange(off, n); err != nil {
		return nil, err
	}
	n = min(n, math.MaxInt64-off) // off+n-1 must not overflow
	var opts minio.GetObjectOptions
	if err := opts.SetRange(off, off+n-1); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRange, err)
	}
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	rc, oi, _, err := m.core.GetObject(ctx, m.bucket, key, opts)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rc.Close()
	// oi.Size is the length of the returned part for a ranged request.
	return readBody(rc, oi.Size, n)
}

// Open implements Store. The stream is the body of one GET request.
func (m *MinIO) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	rc, info, err := m.open(ctx, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, fmt.Errorf("blob: open %q: %w", key, err)
	}
	return rc, info, nil
}

func (m *MinIO) open(ctx context.Context, key string, opts minio.GetObjectOptions) (io.ReadCloser, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	rc, oi, _, err := m.core.GetObject(ctx, m.bucket, key, opts)
	if err != nil {
		return nil, Info{}, mapErr(err)
	}
	return rc, objectInfo(key, oi), nil
}

// Stat implements Store.
func (m *MinIO) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, fmt.Errorf("blob: stat %q: %w", key, err)
	}
	oi, err := m.core.Client.StatObject(ctx, m.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, fmt.Errorf("blob: stat %q: %w", key, mapErr(err))
	}
	return objectInfo(key, oi), nil
}

// Delete implements Store.
func (m *MinIO) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	err := m.core.Client.RemoveObject(ctx, m.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
		return fmt.Errorf("blob: delete %q: %w", key, mapErr(err))
	}
	return nil
}

// List implements Store.
func (m *MinIO) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := validatePrefix(prefix); err != nil {
		return fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	// Cancelling ctx stops minio-go's listing goroutine when we return
	// early; the channel is then drained so that it can exit.
	ctx, cancel := context.WithCancel(ctx)
	ch := m.core.Client.ListObjects(ctx, m.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true})
	defer func() {
		cancel()
		for range ch {
		}
	}()
	for oi := range ch {
		if oi.Err != nil {
			return fmt.Errorf("blob: list %q: %w", prefix, mapErr(oi.Err))
		}
		if strings.HasSuffix(oi.Key, "/") {
			continue // a "directory" marker made by another tool
		}
		if err := fn(Info{Key: oi.Key, Size: oi.Size, ModTime: oi.LastModified, ETag: strings.Trim(oi.ETag, `"`)}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	return nil
}
