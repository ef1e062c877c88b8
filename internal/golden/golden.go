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

import "os"

// Env is the variable that turns rewriting on.
const Env = "MAPFARM_UPDATE_GOLDEN"

// Update reports whether golden files are to be rewritten rather than compared.
func Update() bool { return os.Getenv(Env) != "" }
