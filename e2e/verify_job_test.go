package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// TestVerifyJobSkipEmpty seeds the sample world map with the cache's own skipEmpty (on), which
// leaves the tiles with nothing but background out of the cache, and checks with `cachetool
// verify -job` that every tile the job planned is stored or counted empty by the job (issue 26:
// plain verify reported such tiles as missing and exited 1).
func TestVerifyJobSkipEmpty(t *testing.T) {
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	st := seedAndWait(t, base, seed.Request{Service: "world", Levels: []int{0, 1, 2, 3, 4}})
	if st.Empty == 0 {
		t.Fatalf("the job left no tile empty (done %d of %d): the test shows nothing", st.Done, st.Total)
	}
	out, err := exec.Command(tool, "verify", "-job", st.ID, "-server", base).CombinedOutput()
	t.Logf("cachetool verify -job:\n%s", out)
	if err != nil || !strings.Contains(string(out), " of them left empty on purpose; 0 problems") {
		t.Errorf("cachetool verify -job %s (job: %d done, %d empty): %v", st.ID, st.Done, st.Empty, err)
	}
}
