package metrics_test

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/metrics"
)

// A refusal is counted under its limit's name, found anywhere in the error's chain; every
// limit is reported from zero; other errors count nothing.
func TestLimitRefusals(t *testing.T) {
	m := metrics.New()
	over := fmt.Errorf("identify: %w", limits.Refuse(limits.Vertices, "too many"))
	if !m.Refused(over) || !m.Refused(over) {
		t.Fatal("a wrapped *limits.Error was not counted")
	}
	if m.Refused(errors.New("something else")) {
		t.Fatal("an error that is no limit's was counted")
	}
	var none *metrics.Metrics
	none.Refused(over) // a nil Metrics counts nothing, without panicking
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`mapfarm_limit_refusals_total{limit="maxVertices"} 2`,
		`mapfarm_limit_refusals_total{limit="maxElements"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
