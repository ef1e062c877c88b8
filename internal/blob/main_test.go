package blob_test

import (
	"os"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// TestMain starts a MinIO for the package's tests when none is named (testenv.Services), so
// that go test ./internal/blob runs the MinIO conformance tests without scripts/test.sh.
func TestMain(m *testing.M) { os.Exit(testenv.Services(m, testenv.ServiceMinIO)) }
