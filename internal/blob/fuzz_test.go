package blob_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// FuzzDiskKey checks that any key either is rejected with ErrInvalidKey or
// round-trips through a Disk store as a file inside its root, never outside.
func FuzzDiskKey(f *testing.F) {
	for _, k := range []string{"a", "a/b.png", "../x", "a/../../b", "/etc/passwd", "a//b", ".meta/a", "ü/ß", "a\\..\\b", "a/./b"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		d, err := blob.NewDisk(root)
		if err != nil {
			t.Fatal(err)
		}
		err = d.Put(t.Context(), key, []byte(key), "")
		if verr := blob.ValidateKey(key); verr != nil {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Fatalf("Put(%q) = %v for an invalid key", key, err)
			}
		} else if err == nil {
			got, err := d.Get(t.Context(), key)
			if err != nil || !bytes.Equal(got, []byte(key)) {
				t.Fatalf("Get(%q) = %q, %v after Put", key, got, err)
			}
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(key)))
			if err != nil || !bytes.Equal(b, []byte(key)) {
				t.Fatalf("key %q is not the file below the root: %v", key, err)
			}
		} else if !strings.Contains(err.Error(), "name too long") {
			t.Fatalf("Put(%q) of a valid key: %v", key, err)
		}
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "root" {
			t.Fatalf("Put(%q) wrote outside the root: %v", key, entries)
		}
	})
}
