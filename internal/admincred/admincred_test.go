package admincred

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFind: the credential file is its user's alone (0600 in a 0700 directory); a tool finds
// it from a loopback URL of the api's port, never from another host's URL; the api removes it at
// stop unless a later api wrote its own.
func TestWriteFind(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state", "mapfarm")
	cred := New()
	if len(cred) < 32 {
		t.Fatalf("credential of %d characters, want at least 32", len(cred))
	}
	path := Path(state, "8080")
	if err := Write(path, cred); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{state: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	if entries, _ := os.ReadDir(state); len(entries) != 1 {
		t.Errorf("state directory holds %d files, want the credential alone", len(entries))
	}
	for _, base := range []string{"http://127.0.0.1:8080", "http://localhost:8080/", "http://[::1]:8080", "http://127.0.0.2:8080"} {
		got, _, err := Find(state, base)
		if err != nil || got != cred {
			t.Errorf("Find(%s) = %q, %v; want the credential", base, got, err)
		}
	}
	for _, base := range []string{"http://maps.example.org:8080", "http://10.0.0.5:8080", "http://127.0.0.1.evil.example:8080"} {
		if got, _, err := Find(state, base); !errors.Is(err, ErrNotLocal) || got != "" {
			t.Errorf("Find(%s) = %q, %v; want ErrNotLocal", base, got, err)
		}
	}
	if _, _, err := Find(state, "http://127.0.0.1:9090"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another port: %v, want fs.ErrNotExist", err)
	}
	if err := Write(Path(state, "80"), cred); err != nil {
		t.Fatal(err)
	}
	if got, _, err := Find(state, "http://localhost"); err != nil || got != cred {
		t.Errorf("port 80 by default: %q, %v", got, err)
	}

	// A later api on the same port replaced the file: the first one's stop leaves it.
	later := New()
	if err := Write(path, later); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path, cred); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := Find(state, "http://127.0.0.1:8080"); got != later {
		t.Errorf("after the earlier api's stop: %q, want the later api's", got)
	}
	if err := Remove(path, later); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after its api's stop the file is still there: %v", err)
	}
}
