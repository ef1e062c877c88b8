// Package admincred is the admin credential an api makes for itself when none is configured,
// and how the operator's tools on the same machine find it: the Jupyter-style default, with
// nothing to configure locally and nothing open to a browser.
//
// At start, an api with no admin token (config Security.AdminToken) draws a random credential,
// writes it to a file of the state directory (config StateDir) named after the port it listens
// on, readable by its user only (mode 0600, in a directory of mode 0700), and removes the file
// when it stops. The file holds the credential alone, so it also serves as
// MAPFARM_ADMIN_TOKEN_FILE. A tool given the api's URL (cachetool -server) reads the file of
// that URL's port, and only for a loopback URL: a credential of this machine is never sent to
// another.
package admincred

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// New returns a random credential: 256 bits, base64url without padding (43 characters).
func New() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Path is the file of the credential of the api listening on port, in stateDir.
func Path(stateDir, port string) string {
	return filepath.Join(stateDir, "admin-token-"+port)
}

// Write writes cred to path, readable by its user only: the directory is created with mode
// 0700, the file written beside its final name with mode 0600 and renamed over it, so that no
// reader ever sees a partial credential and no other user ever sees it at all.
func Write(path, cred string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("admin credential: state directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".admin-token-*")
	if err != nil {
		return fmt.Errorf("admin credential: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename, there is nothing left to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("admin credential: %w", err)
	}
	if _, err := f.WriteString(cred + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("admin credential: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("admin credential: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("admin credential: %w", err)
	}
	return nil
}

// Remove removes the file at path if it still holds cred (a later api on the same port may
// have written its own since).
func Remove(path, cred string) error {
	got, err := read(path)
	if err != nil || got != cred {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("admin credential: %w", err)
	}
	return nil
}

// ErrNotLocal is returned by Find for an api URL whose host is not a loopback name or address.
var ErrNotLocal = errors.New("not a loopback URL: the credential file is only for an api on this machine")

// Find returns the credential of the api at base (its URL) from stateDir, and the file it read.
// base must name a loopback host (localhost, 127.0.0.0/8, ::1); its port is the URL's, else
// the scheme's (80, 443). A missing file is an error wrapping fs.ErrNotExist.
func Find(stateDir, base string) (cred, path string, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", "", fmt.Errorf("admin credential: %w", err)
	}
	if !IsLoopbackHost(u.Hostname()) {
		return "", "", fmt.Errorf("admin credential for %s: %w", base, ErrNotLocal)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	path = Path(stateDir, port)
	cred, err = read(path)
	if err != nil {
		return "", path, fmt.Errorf("admin credential for %s: %w", base, err)
	}
	return cred, path, nil
}

// IsLoopbackHost reports whether host (a name or an address, without port or brackets) is
// localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	cred := strings.TrimSpace(string(b))
	if cred == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return cred, nil
}
