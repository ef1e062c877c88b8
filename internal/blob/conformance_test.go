package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// conformance is the table of behaviours every Store must show. Each case
// gets a new, empty store.
var conformance = []struct {
	name string
	fn   func(t *testing.T, s blob.Store)
}{
	{"RoundTrip", testRoundTrip},
	{"DefaultContentType", testDefaultContentType},
	{"Overwrite", testOverwrite},
	{"GetRange", testGetRange},
	{"Missing", testMissing},
	{"ListPrefix", testListPrefix},
	{"ListStopsOnError", testListStopsOnError},
	{"Delete", testDelete},
	{"ConcurrentSamePut", testConcurrentSamePut},
	{"ReadersSeeWholeObjects", testReadersSeeWholeObjects},
	{"Large8MiB", testLarge},
	{"EmptyObject", testEmptyObject},
	{"InvalidKeys", testInvalidKeys},
	{"CanceledContext", testCanceledContext},
}

// runConformance runs every case against a fresh store from newStore.
func runConformance(t *testing.T, newStore func(t *testing.T) blob.Store) {
	for _, c := range conformance {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newStore(t))
		})
	}
}

// pattern returns n deterministic bytes that differ at every offset modulo
// 251, so a wrong offset shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) ^ seed
	}
	return b
}

func mustPut(t *testing.T, s blob.Store, key string, data []byte, ct string) {
	t.Helper()
	if err := s.Put(t.Context(), key, data, ct); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func mustGet(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	b, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return b
}

func listKeys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	err := s.List(t.Context(), prefix, func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

func testRoundTrip(t *testing.T, s blob.Store) {
	ctx := t.Context()
	data := pattern(1000, 7)
	before := time.Now().Add(-time.Minute)
	mustPut(t, s, "outputs/map one.png", data, "image/png")
	if got := mustGet(t, s, "outputs/map one.png"); !bytes.Equal(got, data) {
		t.Fatalf("Get returned %d bytes, not the %d stored", len(got), len(data))
	}
	info, err := s.Stat(ctx, "outputs/map one.png")
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "outputs/map one.png" || info.Size != 1000 || info.ContentType != "image/png" || info.ETag == "" {
		t.Errorf("Stat = %+v, want key, size 1000, image/png and an ETag", info)
	}
	if info.ModTime.Before(before) || info.ModTime.After(time.Now().Add(time.Minute)) {
		t.Errorf("ModTime %v is not about now", info.ModTime)
	}
	rc, oinfo, err := s.Open(ctx, "outputs/map one.png")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("Open streamed %d bytes, not the %d stored", len(got), len(data))
	}
	if oinfo.Size != 1000 || oinfo.ContentType != "image/png" || oinfo.ETag != info.ETag {
		t.Errorf("Open info = %+v, want size 1000, image/png, ETag %q", oinfo, info.ETag)
	}
	// Unicode keys work too.
	mustPut(t, s, "labels/Côte d’Ivoire.txt", []byte("ci"), "text/plain")
	if got := mustGet(t, s, "labels/Côte d’Ivoire.txt"); string(got) != "ci" {
		t.Errorf("unicode key: got %q", got)
	}
}

func testDefaultContentType(t *testing.T, s blob.Store) {
	for key, want := range map[string]string{
		"a/tile.png":  "image/png",
		"a/conf.json": "application/json",
		"a/noext":     "application/octet-stream",
	} {
		mustPut(t, s, key, []byte("x"), "")
		info, err := s.Stat(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if info.ContentType != want {
			t.Errorf("%s: content type %q, want %q", key, info.ContentType, want)
		}
	}
}

func testOverwrite(t *testing.T, s blob.Store) {
	ctx := t.Context()
	mustPut(t, s, "k/conf.xml", pattern(500, 1), "text/xml")
	first, err := s.Stat(ctx, "k/conf.xml")
	if err != nil {
		t.Fatal(err)
	}
	second := pattern(300, 2)
	mustPut(t, s, "k/conf.xml", second, "application/xml")
	if got := mustGet(t, s, "k/conf.xml"); !bytes.Equal(got, second) {
		t.Fatalf("after overwrite Get returned %d bytes, want the second version", len(got))
	}
	info, err := s.Stat(ctx, "k/conf.xml")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 300 || info.ContentType != "application/xml" {
		t.Errorf("after overwrite Stat = %+v, want size 300 and application/xml", info)
	}
	if info.ETag == first.ETag {
		t.Errorf("ETag %q did not change with the content", info.ETag)
	}
	if keys := listKeys(t, s, ""); !slices.Equal(keys, []string{"k/conf.xml"}) {
		t.Errorf("List after overwrite = %q, want one key", keys)
	}
}

func testGetRange(t *testing.T, s blob.Store) {
	data := pattern(1000, 3)
	mustPut(t, s, "bundle/R0000C0000.bundle", data, "application/octet-stream")
	for _, c := range []struct {
		off, n int64
		want   []byte // nil: error expected
	}{
		{0, 10, data[:10]},
		{64, 100, data[64:164]},
		{990, 10, data[990:]},
		{995, 10, data[995:]}, // runs past the end: short
		{999, 1, data[999:]},
		{0, 5000, data},
		{10, math.MaxInt64, data[10:]},
		{1000, 1, nil}, // starts at the end
		{2000, 5, nil}, // starts past the end
		{-1, 5, nil},
		{0, 0, nil},
		{10, -3, nil},
	} {
		got, err := s.GetRange(t.Context(), "bundle/R0000C0000.bundle", c.off, c.n)
		if c.want == nil {
			if !errors.Is(err, blob.ErrInvalidRange) {
				t.Errorf("GetRange(%d, %d) = %d bytes, %v; want ErrInvalidRange", c.off, c.n, len(got), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("GetRange(%d, %d): %v", c.off, c.n, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("GetRange(%d, %d) = %d bytes, want %d (content differs: %v)",
				c.off, c.n, len(got), len(c.want), len(got) == len(c.want))
		}
	}
	if _, err := s.GetRange(t.Context(), "bundle/missing.bundle", 0, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("GetRange of a missing key: %v, want fs.ErrNotExist", err)
	}
}

func testMissing(t *testing.T, s blob.Store) {
	ctx := t.Context()
	// "dir" is only a prefix of a stored key, which on Disk is a directory.
	mustPut(t, s, "dir/obj", []byte("x"), "")
	for _, key := range []string{"nothing/here.png", "dir", "dir/obj/deeper"} {
		_, err := s.Get(ctx, key)
		checkNotExist(t, "Get", key, err)
		_, err = s.GetRange(ctx, key, 0, 1)
		checkNotExist(t, "GetRange", key, err)
		_, err = s.Stat(ctx, key)
		checkNotExist(t, "Stat", key, err)
		rc, _, err := s.Open(ctx, key)
		if rc != nil {
			rc.Close()
		}
		checkNotExist(t, "Open", key, err)
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q) of a missing key: %v", key, err)
		}
	}
	if got := mustGet(t, s, "dir/obj"); string(got) != "x" {
		t.Errorf("deleting missing keys disturbed dir/obj: %q", got)
	}
}

func checkNotExist(t *testing.T, op, key string, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s(%q) = %v, want an error wrapping fs.ErrNotExist", op, key, err)
	} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
		t.Errorf("%s(%q) error %q does not name the key", op, key, err)
	}
}

func testListPrefix(t *testing.T, s blob.Store) {
	all := []string{"a.b", "a/1", "a/2", "a/b/3", "a0", "ab/4", "b", "b-c/d/e/f"}
	// Put in reverse so order cannot come from insertion.
	for i := len(all) - 1; i >= 0; i-- {
		mustPut(t, s, all[i], pattern(10+i, 0), "")
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"a", all[:6]},
		{"a/", []string{"a/1", "a/2", "a/b/3"}},
		{"a/b", []string{"a/b/3"}},
		{"a/b/", []string{"a/b/3"}},
		{"b", []string{"b", "b-c/d/e/f"}},
		{"b-c/d/e/f", []string{"b-c/d/e/f"}},
		{"zzz", nil},
		{"a/zzz/", nil},
	} {
		if got := listKeys(t, s, c.prefix); !slices.Equal(got, c.want) {
			t.Errorf("List(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
	// Sizes and times are filled in.
	err := s.List(t.Context(), "", func(i blob.Info) error {
		want := 10 + slices.Index(all, i.Key)
		if i.Size != int64(want) || i.ModTime.IsZero() {
			t.Errorf("List info %+v, want size %d and a time", i, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testListStopsOnError(t *testing.T, s blob.Store) {
	for i := range 5 {
		mustPut(t, s, fmt.Sprintf("p/%d", i), []byte("x"), "")
	}
	stop := errors.New("enough")
	calls := 0
	err := s.List(t.Context(), "p/", func(blob.Info) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("List returned %v, want the callback's error unchanged", err)
	}
	if calls != 2 {
		t.Errorf("callback called %d times after returning an error at 2", calls)
	}
}

func testDelete(t *testing.T, s blob.Store) {
	ctx := t.Context()
	mustPut(t, s, "d/e/f", []byte("1"), "")
	mustPut(t, s, "d/keep", []byte("2"), "")
	if err := s.Delete(ctx, "d/e/f"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "d/e/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, "d/e/f"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if keys := listKeys(t, s, ""); !slices.Equal(keys, []string{"d/keep"}) {
		t.Errorf("List after Delete = %q", keys)
	}
	// The deleted key's "directory" can now be an object itself.
	mustPut(t, s, "d/e", []byte("3"), "")
	if got := mustGet(t, s, "d/e"); string(got) != "3" {
		t.Errorf("Get(d/e) = %q", got)
	}
}

func testConcurrentSamePut(t *testing.T, s blob.Store) {
	data := pattern(256<<10, 9)
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			errs <- s.Put(t.Context(), "tiles/L00/R0C0.png", data, "image/png")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Put: %v", err)
		}
	}
	if got := mustGet(t, s, "tiles/L00/R0C0.png"); !bytes.Equal(got, data) {
		t.Errorf("after concurrent Puts Get returned %d bytes, not the data", len(got))
	}
	info, err := s.Stat(t.Context(), "tiles/L00/R0C0.png")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(data)) || info.ContentType != "image/png" {
		t.Errorf("after concurrent Puts Stat = %+v", info)
	}
	if keys := listKeys(t, s, ""); !slices.Equal(keys, []string{"tiles/L00/R0C0.png"}) {
		t.Errorf("List after concurrent Puts = %q, want one key (no temporary files)", keys)
	}
}

// testReadersSeeWholeObjects overwrites a key with two versions of the same
// size while readers check that every read is exactly one version.
func testReadersSeeWholeObjects(t *testing.T, s blob.Store) {
	versions := [][]byte{pattern(64<<10, 1), pattern(64<<10, 2)}
	mustPut(t, s, "v", versions[0], "")
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20 {
			if err := s.Put(t.Context(), "v", versions[i%2], ""); err != nil {
				t.Errorf("Put: %v", err)
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for range 20 {
				got, err := s.Get(t.Context(), "v")
				if err != nil {
					t.Errorf("Get during overwrites: %v", err)
					return
				}
				if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
					t.Errorf("Get during overwrites returned a mix of versions (%d bytes)", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}

func testLarge(t *testing.T, s blob.Store) {
	data := make([]byte, 8<<20)
	r := rand.NewChaCha8([32]byte{1, 2, 3})
	r.Read(data)
	mustPut(t, s, "big/8MiB.bin", data, "application/octet-stream")
	if got := mustGet(t, s, "big/8MiB.bin"); !bytes.Equal(got, data) {
		t.Fatalf("Get returned %d bytes that differ from the 8 MiB stored", len(got))
	}
	off := int64(5<<20 + 123)
	got, err := s.GetRange(t.Context(), "big/8MiB.bin", off, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[off:off+1<<20]) {
		t.Errorf("GetRange inside the 8 MiB object returned wrong bytes")
	}
	rc, info, err := s.Open(t.Context(), "big/8MiB.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(data); n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) || info.Size != n {
		t.Errorf("Open streamed %d bytes (info size %d) with a different hash", n, info.Size)
	}
}

func testEmptyObject(t *testing.T, s blob.Store) {
	mustPut(t, s, "empty", nil, "text/plain")
	if got := mustGet(t, s, "empty"); len(got) != 0 {
		t.Errorf("Get(empty) = %d bytes", len(got))
	}
	info, err := s.Stat(t.Context(), "empty")
	if err != nil || info.Size != 0 {
		t.Errorf("Stat(empty) = %+v, %v", info, err)
	}
	if _, err := s.GetRange(t.Context(), "empty", 0, 1); !errors.Is(err, blob.ErrInvalidRange) {
		t.Errorf("GetRange on an empty object: %v, want ErrInvalidRange", err)
	}
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	for _, key := range []string{
		"", "/abs/key", "../up", "a/../b", "a/./b", "a//b", "a/", ".meta/x", "a/.tmp-x",
		`a\b`, "a\x00b", "tab\there", string([]byte{0xff, 0xfe}), strings.Repeat("k", 1025),
	} {
		checks := map[string]error{
			"Put":    s.Put(ctx, key, []byte("x"), ""),
			"Delete": s.Delete(ctx, key),
		}
		_, checks["Get"] = s.Get(ctx, key)
		_, checks["GetRange"] = s.GetRange(ctx, key, 0, 1)
		_, checks["Stat"] = s.Stat(ctx, key)
		_, _, checks["Open"] = s.Open(ctx, key)
		for op, err := range checks {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q) = %v, want ErrInvalidKey", op, key, err)
			}
		}
	}
	for _, prefix := range []string{"../", "/a", "a//"} {
		err := s.List(ctx, prefix, func(blob.Info) error { return nil })
		if !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q) = %v, want ErrInvalidKey", prefix, err)
		}
	}
	if keys := listKeys(t, s, ""); len(keys) != 0 {
		t.Errorf("invalid keys left objects behind: %q", keys)
	}
}

func testCanceledContext(t *testing.T, s blob.Store) {
	mustPut(t, s, "c", []byte("x"), "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, "c2", []byte("y"), ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled context: %v", err)
	}
	if _, err := s.Get(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context: %v", err)
	}
	if err := s.List(ctx, "", func(blob.Info) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context: %v", err)
	}
}
