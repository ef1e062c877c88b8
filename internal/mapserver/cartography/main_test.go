package cartography_test

import (
	"os"
	"testing"

	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

// TestMain drops the PostGIS copy of the samples after the package's tests (provider parity,
// see mapservertest).
func TestMain(m *testing.M) { os.Exit(mapservertest.Main(m)) }
