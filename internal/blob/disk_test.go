package blob_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

func newDisk(t *testing.T) *blob.Disk {
	t.Helper()
	d, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiskConformance(t *testing.T) {
	runConformance(t, func(t *testing.T) blob.Store { return newDisk(t) })
}

// TestDiskLayout checks that objects are plain files holding exactly their
// bytes, with no temporary files left behind.
func TestDiskLayout(t *testing.T) {
	d := newDisk(t)
	mustPut(t, d, "caches/World/conf.xml", []byte("<conf/>"), "text/xml")
	got, err := os.ReadFile(filepath.Join(d.Root(), "caches", "World", "conf.xml"))
	if err != nil || string(got) != "<conf/>" {
		t.Fatalf("file content %q, %v", got, err)
	}
	entries, err := os.ReadDir(filepath.Join(d.Root(), "caches", "World"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only conf.xml", len(entries))
	}
}

// TestDiskStaleSidecar checks that a data file changed behind the store's
// back (or left by a crash between the renames) does not report the old
// content type and ETag.
func TestDiskStaleSidecar(t *testing.T) {
	d := newDisk(t)
	ctx := t.Context()
	mustPut(t, d, "x/tile.jpg", []byte("old"), "image/x-custom")
	before, err := d.Stat(ctx, "x/tile.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if before.ContentType != "image/x-custom" {
		t.Fatalf("content type %q, want the one given to Put", before.ContentType)
	}
	p := filepath.Join(d.Root(), "x", "tile.jpg")
	if err := os.WriteFile(p, []byte("replaced by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := d.Stat(ctx, "x/tile.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if after.ContentType != "image/jpeg" || after.ETag == before.ETag || after.Size != 16 {
		t.Errorf("after a manual replace Stat = %+v, want the extension's type, a new ETag, size 16", after)
	}
}

// TestDiskIgnoresStrayFiles checks that temporary files and files with
// dot-names are not listed and cannot be read as keys.
func TestDiskIgnoresStrayFiles(t *testing.T) {
	d := newDisk(t)
	mustPut(t, d, "a/b", []byte("1"), "")
	if err := os.WriteFile(filepath.Join(d.Root(), "a", ".tmp-b-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(t, d, ""); len(keys) != 1 || keys[0] != "a/b" {
		t.Errorf("List = %q, want only a/b", keys)
	}
}

// TestDiskDeletePrunesDirectories checks that deleting the last object in a
// directory removes the empty directories, data and sidecar trees alike.
func TestDiskDeletePrunesDirectories(t *testing.T) {
	d := newDisk(t)
	mustPut(t, d, "p/q/r/s", []byte("1"), "")
	if err := d.Delete(t.Context(), "p/q/r/s"); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(d.Root(), "p"), filepath.Join(d.Root(), ".meta", "p")} {
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists after deleting its only object (%v)", dir, err)
		}
	}
	if _, err := os.Stat(d.Root()); err != nil {
		t.Errorf("root removed: %v", err)
	}
}

func TestDiskModTimeIsWriteTime(t *testing.T) {
	d := newDisk(t)
	start := time.Now().Add(-2 * time.Second)
	mustPut(t, d, "t", []byte("1"), "")
	info, err := d.Stat(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if info.ModTime.Before(start) {
		t.Errorf("ModTime %v before the Put at %v", info.ModTime, start)
	}
}

func TestNewDiskErrors(t *testing.T) {
	if _, err := blob.NewDisk(""); err == nil {
		t.Error("NewDisk(\"\") succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.NewDisk(f); err == nil {
		t.Error("NewDisk on a regular file succeeded")
	}
}

func TestValidateKey(t *testing.T) {
	for _, key := range []string{"a", "a/b.png", "caches/World/_alllayers/L03/R0000C0000.bundle", "x y/ü", "a..b/c."} {
		if err := blob.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range []string{"", "..", "../a", "a/..", "/a", "a/", ".hidden", "a//b", `a\b`} {
		if err := blob.ValidateKey(key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

// TestDiskPutOverDirectoryFails documents the one difference from S3: a key
// cannot be both an object and a directory of objects.
func TestDiskPutOverDirectoryFails(t *testing.T) {
	d := newDisk(t)
	mustPut(t, d, "a/b", []byte("1"), "")
	if err := d.Put(t.Context(), "a", []byte("2"), ""); err == nil {
		t.Error("Put(a) over the directory of a/b succeeded")
	}
	mustPut(t, d, "f", []byte("1"), "")
	if err := d.Put(t.Context(), "f/g", []byte("2"), ""); err == nil {
		t.Error("Put(f/g) below the object f succeeded")
	}
	if got := mustGet(t, d, "a/b"); !bytes.Equal(got, []byte("1")) {
		t.Errorf("a/b = %q after the failed Put", got)
	}
}

// TestDiskStaleSidecarSameSizeAndTime simulates a crash between the two
// renames of a Put whose new data has the old size and time: the sidecar
// must still be recognised as stale.
func TestDiskStaleSidecarSameSizeAndTime(t *testing.T) {
	d := newDisk(t)
	mustPut(t, d, "v/tile", []byte("AAAA"), "image/x-old")
	p := filepath.Join(d.Root(), "v", "tile")
	old, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d.Root(), "v", ".tmp-crash")
	if err := os.WriteFile(tmp, []byte("BBBB"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	info, err := d.Stat(t.Context(), "v/tile")
	if err != nil {
		t.Fatal(err)
	}
	if info.ContentType == "image/x-old" {
		t.Errorf("Stat used the sidecar of the replaced data: %+v", info)
	}
	if got := mustGet(t, d, "v/tile"); string(got) != "BBBB" {
		t.Errorf("Get = %q", got)
	}
}
