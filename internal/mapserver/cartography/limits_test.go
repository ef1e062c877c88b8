package cartography_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// TestHostileNumbers (issue 17): numbers that used to cost seconds and gigabytes, panic a worker
// or reach the task encoder as NaN are refused by the api before anything is queued, with a client
// fault that names the field, the limit and the value, at once. docs/limits.md lists the limits.
func TestHostileNumbers(t *testing.T) {
	f, lf := newCartoFixture(t)
	nan, inf := math.NaN(), math.Inf(1)
	md := mapservertest.MapDesc(0, 0, 100000, 50000, 0)
	disp := &gisxml.ImageDisplay{ImageWidth: 1000, ImageHeight: 500, ImageDPI: 96}
	scaleBar := func(dpi float64, sb gisxml.ScaleBar) *gisxml.ExportScaleBar {
		return &gisxml.ExportScaleBar{ScaleBar: sb, MapDescription: md, MapDisplay: disp,
			ImageDescription: &gisxml.ImageDescription{ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 4096, ImageHeight: 4096, ImageDPI: dpi}}}
	}
	alt := func(fields gisxml.ScaleBarFields) *gisxml.AlternatingScaleBar {
		return &gisxml.AlternatingScaleBar{ScaleBarFields: fields}
	}
	// A buffer around Brazil on a world map (4e7 m square in a square image, diagonal 5.66e7 m), or on 10 km of it.
	brazil := featureID(t, f, "Brazil")
	bx, by := mercator(-50, -10)
	exportMap := func(ext [4]float64, dpi, distance float64) *gisxml.ExportMapImage {
		m := mapservertest.MapDesc(ext[0], ext[1], ext[2], ext[3], 0)
		m.LayerDescriptions = gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true, SelectionFeatures: gisxml.ArrayOfInt{brazil},
			ShowSelectionBuffer: true, SelectionBufferDistance: distance}}
		return &gisxml.ExportMapImage{MapDescription: m, ImageDescription: &gisxml.ImageDescription{
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 4096, ImageHeight: 4096, ImageDPI: dpi}}}
	}
	world := [4]float64{-2e7, -1e7, 2e7, 1e7}
	city := [4]float64{bx - 5000, by - 5000, bx + 5000, by + 5000}

	for _, tc := range []struct {
		name string
		op   string
		req  any
		want []string // the field, the limit and the value
	}{
		{"scale bar DPI 100000", "ExportScaleBar", scaleBar(100000, nil), []string{"ImageDPI", "1 to 2400", "100000"}},
		{"scale bar DPI 1e300", "ExportScaleBar", scaleBar(1e300, nil), []string{"ImageDPI", "1 to 2400", "1e+300"}},
		{"scale bar DPI NaN", "ExportScaleBar", scaleBar(nan, nil), []string{"ImageDPI", "1 to 2400", "NaN"}},
		{"scale bar DPI negative", "ExportScaleBar", scaleBar(-96, nil), []string{"ImageDPI", "1 to 2400", "-96"}},
		{"scale bar DPI +Inf", "ExportScaleBar", scaleBar(inf, nil), []string{"ImageDPI", "1 to 2400", "+Inf"}},
		{"division 1e308", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{Division: operation.Ptr(1e308)})), []string{"Division", "4096 pixels", "1e+308"}},
		{"division NaN", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{Division: operation.Ptr(nan)})), []string{"Division", "finite", "NaN"}},
		{"division +Inf", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{Division: operation.Ptr(inf)})), []string{"Division", "finite", "+Inf"}},
		{"division negative", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{Division: operation.Ptr(-5.0)})), []string{"Division", "not negative", "-5"}},
		{"bar height NaN", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{BarHeight: operation.Ptr(nan)})), []string{"BarHeight", "1000 points", "NaN"}},
		{"bar height 1e300", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{BarHeight: operation.Ptr(1e300)})), []string{"BarHeight", "1000 points", "1e+300"}},
		{"label size +Inf", "ExportScaleBar", scaleBar(96, alt(gisxml.ScaleBarFields{LabelSymbol: &gisxml.TextSymbol{Size: inf}})), []string{"LabelSymbol/Size", "1000 points", "+Inf"}},
		{"label 500 pt at 2400 DPI", "ExportScaleBar", scaleBar(2400, alt(gisxml.ScaleBarFields{LabelSymbol: &gisxml.TextSymbol{Size: 500}})), []string{"LabelSymbol/Size", "1024 pixels", "500 pt"}},
		{"unit label 100 pt at 1200 DPI", "ExportScaleBar", scaleBar(1200, alt(gisxml.ScaleBarFields{UnitLabelSymbol: &gisxml.TextSymbol{Size: 100}})), []string{"UnitLabelSymbol/Size", "1024 pixels", "100 pt"}},
		{"mark height 1e300", "ExportScaleBar", scaleBar(96, &gisxml.AlternatingScaleBar{DivisionMarkHeight: operation.Ptr(1e300)}), []string{"DivisionMarkHeight", "1000 points", "1e+300"}},
		{"buffer 1e308", "ExportMapImage", exportMap(world, 96, 1e308), []string{"LayerDescriptions[0]/SelectionBufferDistance", "diagonal", "5.65685e+07", "1e+308"}},
		{"buffer 1e7 m around 10 km", "ExportMapImage", exportMap(city, 96, 1e7), []string{"LayerDescriptions[0]/SelectionBufferDistance", "diagonal", "14142.1", "1e+07"}},
		{"buffer +Inf", "ExportMapImage", exportMap(world, 96, inf), []string{"SelectionBufferDistance", "diagonal", "+Inf"}},
		{"buffer NaN", "ExportMapImage", exportMap(world, 96, nan), []string{"LayerDescriptions[0]/SelectionBufferDistance", "finite", "NaN"}},
		{"buffer negative", "ExportMapImage", exportMap(world, 96, -1), []string{"SelectionBufferDistance", "not negative", "-1"}},
		{"map DPI NaN", "ExportMapImage", exportMap(world, nan, 1000), []string{"ImageDPI", "1 to 2400", "NaN"}},
		{"map DPI 1e300", "ExportMapImage", exportMap(world, 1e300, 1000), []string{"ImageDPI", "1 to 2400", "1e+300"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := *f
			sub.T = t
			jobs := lf.jobs
			start := time.Now()
			msg := sub.ClientFault("world", tc.op, tc.req)
			if took := time.Since(start); took > 2*time.Second { // the bound; it is microseconds
				t.Errorf("the fault took %v", took)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("fault %q does not say %q", msg, w)
				}
			}
			if lf.jobs != jobs {
				t.Errorf("%d tasks went to the farm", lf.jobs-jobs)
			}
		})
	}

	// At the limits, the requests draw (in 1024×1024 images: the limits do not depend on the
	// image's size, and 4096×4096 cost 25 s under -race).
	small := func(d *gisxml.ImageDescription) { d.ImageDisplay.ImageWidth, d.ImageDisplay.ImageHeight = 1024, 1024 }
	sb := scaleBar(2400, alt(gisxml.ScaleBarFields{LabelSymbol: &gisxml.TextSymbol{Size: 30}}))
	small(sb.ImageDescription)
	mapservertest.Must[gisxml.ExportScaleBarResponse](f, "world", "ExportScaleBar", sb)
	em := exportMap(city, 96, 14142)
	small(em.ImageDescription)
	mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", em)
}
