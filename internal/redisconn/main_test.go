package redisconn

import (
	"os"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// TestMain finds or starts a Redis for the package's tests when none is named
// (testenv.Services), so that go test ./internal/redisconn needs no script.
func TestMain(m *testing.M) { os.Exit(testenv.Services(m, testenv.ServiceRedis)) }
