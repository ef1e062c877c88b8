package mapdraw

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// BenchmarkWorldProjected measures what projecting on the fly costs: the world sample's
// countries (99,000 vertices, outlined and labelled, 1024×768 PNG) drawn in a system, side by
// side from data already stored in that system ("own") and from the same data stored in Web
// Mercator, projected as they are drawn ("on-the-fly"). Both read from memory, so the figure is
// not diluted by reading a GeoPackage. 4326 projects with the built-in engine; 8857 (Equal
// Earth), 54030 (Robinson) and 3035 (LAEA Europe, over Europe) through PROJ, in a build with
// -tags proj (skipped otherwise). docs/projections.md reports the ratios:
//
//	go test -tags proj ./internal/mapdraw -run '^$' -bench WorldProjected -benchtime 40x -count 3
func BenchmarkWorldProjected(b *testing.B) {
	cfg, err := servicedef.Load(filepath.Join("..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		b.Fatal(err)
	}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	svc, _ := c.Service("world")
	m, _ := svc.Map("Layers")
	countries, _ := m.Layer(1)
	merc := memoryCopy(b, countries.Data, nil)
	r, err := render.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	sys := c.Systems()
	world := orb.Bound{Min: orb.Point{-180, -85}, Max: orb.Point{180, 85}}
	europe := orb.Bound{Min: orb.Point{-12, 34}, Max: orb.Point{40, 62}}
	for _, tc := range []struct {
		wkid int
		area orb.Bound
	}{{4326, world}, {8857, world}, {54030, world}, {3035, europe}} {
		to := proj.SR{WKID: tc.wkid}
		t, err := sys.Transformer(proj.SR{WKID: proj.WGS84}, to)
		if errors.Is(err, proj.ErrUnsupported) {
			b.Logf("%d: %v", tc.wkid, err)
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		ext, err := t.Bound(tc.area)
		if err != nil {
			b.Fatal(err)
		}
		view := render.View{Extent: fit(ext, 1024, 768), Width: 1024, Height: 768, DPI: 96}
		// The data as stored in the target system: clipped and projected (exactly) once.
		windows, err := sys.DrawWindows(m.SR, to)
		if err != nil {
			b.Fatal(err)
		}
		exact, err := sys.Transformer(m.SR, to)
		if err != nil {
			b.Fatal(err)
		}
		own := mapWith(m, countries, to, memoryCopy(b, feature.Projected(feature.Clipped(merc, windows, nil), exact), &to))
		fly := mapWith(m, countries, m.SR, merc)
		layers := []LayerState{{ID: 1, Visible: true, ShowLabels: true}}
		b.Run(fmt.Sprintf("%d/own", tc.wkid), func(b *testing.B) {
			benchDraw(b, r, Request{Map: own, View: view, Layers: layers, Format: render.PNG})
		})
		b.Run(fmt.Sprintf("%d/on-the-fly", tc.wkid), func(b *testing.B) {
			benchDraw(b, r, Request{Map: fly, View: view, Layers: layers, Format: render.PNG, SR: to})
		})
	}
}

// memoryCopy reads every feature of src into an in-memory layer (in the SR sr, or src's).
func memoryCopy(b *testing.B, src feature.Source, sr *proj.SR) feature.Source {
	info := src.Info()
	var feats []feature.Feature
	err := src.Scan(context.Background(), &feature.Query{}, func(f *feature.Feature) error {
		if f.Geom != nil {
			c := *f
			c.Values = append([]any(nil), f.Values...)
			feats = append(feats, c)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if sr == nil {
		sr = &info.SR
	}
	return feature.NewLayer(info.Name, *sr, info.GeometryType, info.Fields, feats)
}

// mapWith is m with only the layer l, its data replaced, in the system sr.
func mapWith(m *catalog.Map, l *catalog.Layer, sr proj.SR, data feature.Source) *catalog.Map {
	lc := *l
	lc.Data = data
	mc := *m
	mc.SR, mc.Layers = sr, []*catalog.Layer{&lc}
	return &mc
}

func benchDraw(b *testing.B, r *render.Renderer, req Request) {
	ctx := context.Background()
	if _, err := Draw(ctx, r, req); err != nil { // warm the caches, as a running worker has them
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		n++
		if _, err := Draw(ctx, r, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// fit grows b about its centre to the aspect ratio w:h.
func fit(b orb.Bound, w, h int) orb.Bound {
	bw, bh := b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]
	if want := float64(w) / float64(h); bw/bh < want {
		bw = bh * want
	} else {
		bh = bw / want
	}
	c := b.Center()
	return orb.Bound{Min: orb.Point{c[0] - bw/2, c[1] - bh/2}, Max: orb.Point{c[0] + bw/2, c[1] + bh/2}}
}

// cpuTime is the process's user and system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
