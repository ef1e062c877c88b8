package tilearchive_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilearchive"
)

// FuzzPMTiles: reading any file as PMTiles (header, directories, leaves, tiles) returns tiles
// or an error and never panics or reads outside the file. The seed corpus is a valid archive
// and pieces of it.
func FuzzPMTiles(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.pmtiles")
	w, err := tilearchive.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	for _, t := range []tilearchive.ZXY{{Z: 0}, {Z: 1, X: 1}, {Z: 1, X: 0, Y: 1}, {Z: 3, X: 5, Y: 2}} {
		w.Put(t, []byte("tile "+t.String()))
	}
	if err := w.Close(tilearchive.Metadata{Name: "seed", Format: "png"}); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:127])
	f.Add(valid[:len(valid)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.pmtiles")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := tilearchive.Open(path)
		if err != nil {
			return
		}
		defer r.Close()
		n := 0
		for _, b := range r.Tiles() {
			if b == nil {
				break
			}
			if n++; n > 10000 { // a run may claim billions of tiles
				break
			}
		}
	})
}
