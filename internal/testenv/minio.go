package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Bucket returns a bucket name that no other test uses, derived from the
// test's name plus random characters, such as "mft-testconformance-3fa9c1d2".
// It does not create the bucket. When the test ends, the bucket, if it was
// created, is emptied and removed (best effort). Bucket skips or fails t
// like [MinIO] when no MinIO server is configured.
func Bucket(t testing.TB) string {
	t.Helper()
	ep := MinIO(t)
	name := BucketName(t.Name())
	t.Cleanup(func() { removeBucket(ep, name) })
	return name
}

// BucketName turns a test name into a valid, unique S3 bucket name: 3 to 63
// characters of lowercase letters, digits and hyphens, starting "mft-" and
// ending in 8 random hex digits.
func BucketName(testName string) string {
	const maxStem = 63 - len("mft-") - len("-") - 8
	var b strings.Builder
	dash := true // no leading dash, no runs of dashes
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= maxStem {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	stem := strings.TrimSuffix(b.String(), "-")
	if stem == "" {
		stem = "test"
	}
	return "mft-" + stem + "-" + randomHex(4)
}

// removeBucket deletes every object in bucket and then the bucket. Errors are
// ignored: the data dir of the MinIO started by scripts/test.sh goes away
// with it anyway.
func removeBucket(ep MinIOEndpoint, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := minio.New(ep.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, ""),
	})
	if err != nil {
		return
	}
	if ok, err := c.BucketExists(ctx, bucket); err != nil || !ok {
		return
	}
	objs := c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for e := range c.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{}) {
		_ = e // best effort
	}
	c.RemoveBucket(ctx, bucket)
}
