// Package golden is the one switch of the tests' golden files: the expected images, XML and
// JSON kept in a package's testdata and compared with what the code makes now. After a
// deliberate change, rewrite them all with
//
//	MAPFARM_UPDATE_GOLDEN=1 go test -tags proj ./...
//
// (or the packages concerned), then read the diff before committing it. An environment
// variable rather than a flag: go test ./... passes a flag to every test binary, and those
// that do not define it fail.
package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// Env is the variable that turns rewriting on.
const Env = "MAPFARM_UPDATE_GOLDEN"

// Update reports whether golden files are to be rewritten rather than compared.
func Update() bool { return os.Getenv(Env) != "" }

// Check compares got with the golden file at path, or writes got there (making its directory)
// when Update is on. A difference fails the test, naming the file and the first byte that
// differs, with the text around it when both are text.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with %s=1 to write it)", err, Env)
	}
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	msg := fmt.Sprintf("%s differs at byte %d: %d bytes, the file %d (rerun with %s=1 after checking the change)",
		path, i, len(got), len(want), Env)
	if utf8.Valid(got) && utf8.Valid(want) {
		from := max(0, i-200)
		msg += fmt.Sprintf("\n got: %q\nwant: %q", got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
	}
	t.Error(msg)
}
