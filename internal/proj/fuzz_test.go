package proj_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// FuzzFromWKT checks that FromWKT, the reader of every spatial reference a client gives as
// text, never panics, and that what it answers is one of its three answers: ErrInvalid, a
// built-in WKID, or the text itself.
func FuzzFromWKT(f *testing.F) {
	files, _ := filepath.Glob("testdata/srs/*.txt")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "foo", "GEOGCS[", `GEOGCS["a""b",(1)]`, `A[B[C[D[1]]]]`, "PROJCS[x,1e999]", `PROJCRS["x",ID["EPSG","3857"]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sr, err := proj.FromWKT(text)
		switch {
		case err != nil:
			if !errors.Is(err, proj.ErrInvalid) {
				t.Fatalf("FromWKT(%q) error %v does not wrap ErrInvalid", text, err)
			}
		case sr.WKID != 0:
			if !sr.Known() || sr.Text != "" {
				t.Fatalf("FromWKT(%q) = %+v, not a built-in system", text, sr)
			}
		case sr.Text == "":
			t.Fatalf("FromWKT(%q) = %+v: neither a WKID nor the text", text, sr)
		}
	})
}
