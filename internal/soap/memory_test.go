package soap_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// hostileBodies are request bodies of about 8 MB (the default body limit) that cost a tree-
// building decoder hundreds of megabytes: millions of empty elements, of an unknown name and
// of a decoded type, and the largest honest request, a 100,000-vertex polygon.
func hostileBodies() map[string][]byte {
	spatial := func(points string) []byte {
		return []byte(envelope(`<g:QueryFeatureCount><MapName>Layers</MapName><QueryFilter xsi:type="g:SpatialFilter"><SpatialRel>gisSpatialRelIntersects</SpatialRel>` +
			`<FilterGeometry xsi:type="g:PolygonN"><RingArray><Ring><PointArray>` + points +
			`</PointArray></Ring></RingArray></FilterGeometry></QueryFilter></g:QueryFeatureCount>`))
	}
	var poly strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&poly, `<Point><X>%.6f</X><Y>%.6f</Y></Point>`, -120+float64(i)*1e-4, 45+float64(i%1000)*1e-4)
	}
	return map[string][]byte{
		"2M unknown empty elements": []byte(envelope(`<g:GetMapCount>` + strings.Repeat("<a/>", 2_000_000) + `</g:GetMapCount>`)),
		"1M empty points":           spatial(strings.Repeat("<Point/>", 1_000_000)),
		"100k-vertex polygon":       spatial(poly.String()),
	}
}

// heapGrowth is what four concurrent reads of one body cost the heap: the peak of HeapInuse
// above the start (sampled every 200 µs), the bytes allocated (TotalAlloc) and the bytes still
// held by the four decoded requests after a collection (HeapAlloc).
type heapGrowth struct {
	peakInuse, allocated, retained uint64
	errs                           []error
}

func measureFour(c *soap.Codec, body []byte) heapGrowth {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	reqs := make([]*soap.Request, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reqs[i], errs[i] = c.ReadRequest(bytes.NewReader(body), nil)
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.GC()
	var kept runtime.MemStats
	runtime.ReadMemStats(&kept)
	runtime.KeepAlive(reqs)
	g := heapGrowth{allocated: after.TotalAlloc - before.TotalAlloc, errs: errs}
	if peak > before.HeapInuse {
		g.peakInuse = peak - before.HeapInuse
	}
	if kept.HeapAlloc > before.HeapAlloc {
		g.retained = kept.HeapAlloc - before.HeapAlloc
	}
	return g
}

const mb = 1 << 20

// Four concurrent 8 MB bodies keep less than 100 MB of heap: the reader builds no tree, and
// what it decodes is charged to MaxDecodedBytes (10 MiB a request by default). The retained
// heap (HeapAlloc after a collection, the four results still held) is asserted under 100 MB;
// the sampled peak of HeapInuse, which the collector's pacing moves, is reported
// (BenchmarkHostileBodies too) and held to a loose bound. Measured (2 busy cores): peak +35 to
// +37 MB for 2M unknown empty elements, +81 to +100 MB for 1M empty points, +75 to +91 MB for
// four 100,000-vertex polygons (31.6 MB of them retained); the tree-building reader before:
// +1,477, +1,324 and +333 MB.
func TestHostileBodiesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 8 MB bodies")
	}
	c := newCodec()
	for name, body := range hostileBodies() {
		if raceEnabled && name != "1M empty points" {
			t.Logf("%s: not read under -race (too slow; go test without -race reads it)", name)
			continue
		}
		g := measureFour(c, body)
		t.Logf("%s (%.1f MB body): 4 concurrent reads: peak HeapInuse +%.1f MB, allocated %.1f MB, retained %.1f MB; outcome %v",
			name, float64(len(body))/mb, float64(g.peakInuse)/mb, float64(g.allocated)/mb, float64(g.retained)/mb, g.errs[0])
		if g.retained > 100*mb {
			t.Errorf("%s: four reads retain %.1f MB, want < 100 MB", name, float64(g.retained)/mb)
		}
		// The peak is paced by the collector, so only a loose bound is asserted: the tree-
		// building reader this one replaced peaked at 1,300-1,500 MB on the hostile bodies.
		if g.peakInuse > 200*mb {
			t.Errorf("%s: four reads peak at %.1f MB of heap in use, want < 200 MB", name, float64(g.peakInuse)/mb)
		}
	}
}

// BenchmarkHostileBodies reports, per body, the heap that four concurrent reads cost:
//
//	go test ./internal/soap -run '^$' -bench HostileBodies -benchtime 3x
func BenchmarkHostileBodies(b *testing.B) {
	c := newCodec()
	for name, body := range hostileBodies() {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			var g heapGrowth
			for range b.N {
				gi := measureFour(c, body)
				g.peakInuse = max(g.peakInuse, gi.peakInuse)
				g.allocated = max(g.allocated, gi.allocated)
				g.retained = max(g.retained, gi.retained)
			}
			b.ReportMetric(float64(g.peakInuse)/mb, "peak-inuse-MB")
			b.ReportMetric(float64(g.allocated)/mb, "alloc-MB")
			b.ReportMetric(float64(g.retained)/mb, "retained-MB")
		})
	}
}

// Limits a hostile body meets, by name, in the fault and in its Err.
func TestReaderLimits(t *testing.T) {
	small := soap.NewCodec(ns, soap.Limits{MaxElements: 100, MaxDecodedBytes: 4096})
	for _, tc := range []struct {
		name, doc string
		limit     limits.Name
		want      string
	}{
		{"elements", envelope(`<g:GetMapCount>` + strings.Repeat("<a/>", 200) + `</g:GetMapCount>`), "maxElements", "more than 100 elements"},
		{"more Body children are passed over", envelope(`<g:GetMapName><Index>1</Index></g:GetMapName><x>` + strings.Repeat("y", 10) + `</x>`), "", ""},
		{"decoded string", envelope(`<g:Find><SearchString>` + strings.Repeat("y", 5000) + `</SearchString></g:Find>`), "maxDecodedBytes", "more than 4096 bytes decoded"},
		{"decoded points", envelope(`<g:FromMapPoints><MapPoints xsi:type="g:MultipointN"><PointArray>` + strings.Repeat("<Point/>", 60) + `</PointArray></MapPoints></g:FromMapPoints>`), "maxDecodedBytes", "more than 4096 bytes decoded"},
		// A limit broken late in the document outranks a bad value before it.
		{"limit after bad value", envelope(`<g:GetMapName><Index>two</Index>` + strings.Repeat("<a/>", 200) + `</g:GetMapName>`), "maxElements", "more than 100 elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := small.ReadRequest(strings.NewReader(tc.doc), nil)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			var f *soap.Fault
			if !errors.As(err, &f) || f.Code != soap.FaultClient || !strings.Contains(f.String, tc.want) {
				t.Fatalf("err = %v, want a soap:Client fault containing %q", err, tc.want)
			}
			if name, _ := limits.Of(err); name != tc.limit {
				t.Fatalf("err = %v, want a LimitError of %s", err, tc.limit)
			}
		})
	}
}
