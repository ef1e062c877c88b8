package queries

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/cartography"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// maxJenksValues bounds the values natural breaks work on (O(k·n²)): larger inputs are sampled
// evenly from the sorted values.
const maxJenksValues = 2000

// GenerateDataClasses classifies a layer's or table's values into a renderer. A ClassBreaksDef
// gives a ClassBreaksRenderer on a numeric field (natural breaks (Jenks), equal interval,
// quantile or standard deviation; BreakCount classes, 5 by default; normalized by a field, by
// log10 or by percent of total); a UniquesValuesDef gives a UniqueValueRenderer with one class
// per distinct value combination of 1–3 fields, sorted. Symbols are the BaseSymbol (or a
// simple symbol fitting the geometry) coloured along the ColorRamp's FromColor → ToColor (RGB
// interpolation; default light yellow → dark red). The definition expression applies.
func (s *Service) GenerateDataClasses(ctx context.Context, c *operation.Call, req *gisxml.GenerateDataClasses) (*gisxml.GenerateDataClassesResponse, error) {
	_, src, _, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	p, err := newPlan(ctx, src, nil, defExpr)
	if err != nil {
		return nil, err
	}
	var r gisxml.FeatureRenderer
	switch d := req.DataClassificationDef.(type) {
	case *gisxml.ClassBreaksDef:
		r, err = classBreaks(p, d)
	case *gisxml.UniqueValuesDef:
		r, err = uniqueValues(p, d)
	case nil:
		return nil, operation.Invalid("DataClassificationDef is required")
	default:
		return nil, operation.Invalid("DataClassificationDef %s is not supported", d.GisType())
	}
	if err != nil {
		return nil, err
	}
	return &gisxml.GenerateDataClassesResponse{Result: r}, nil
}

func numericField(src *source, name, what string) (int, error) {
	i := src.field(name)
	if i < 0 {
		return 0, operation.Invalid("%s: %s %d (%s) has no field %q (fields: %s)", what, src.kind, src.id, src.name, name, src.fieldNames())
	}
	if !src.fields[i].Type.Numeric() {
		return 0, operation.Invalid("%s: field %s is %s, not numeric", what, src.fields[i].Name, src.fields[i].Type)
	}
	return src.fieldIndex[i], nil
}

func classBreaks(p *plan, d *gisxml.ClassBreaksDef) (gisxml.FeatureRenderer, error) {
	col, err := numericField(p.src, d.ClassificationField, "ClassificationField")
	if err != nil {
		return nil, err
	}
	k := 5
	if d.BreakCount != nil {
		if *d.BreakCount < 1 || *d.BreakCount > 256 {
			return nil, operation.Invalid("BreakCount must be 1 to 256 (got %d)", *d.BreakCount)
		}
		k = int(*d.BreakCount)
	}
	norm := gisxml.NormalizeByNothing
	if d.NormalizationType != nil && *d.NormalizationType != "" {
		norm = *d.NormalizationType
	}
	normCol := -1
	switch norm {
	case gisxml.NormalizeByNothing, gisxml.NormalizeByLog, gisxml.NormalizeByPercentOfTotal:
	case gisxml.NormalizeByField:
		if d.NormalizationField == nil {
			return nil, operation.Invalid("NormalizationField is required with gisNormalizeByField")
		}
		if normCol, err = numericField(p.src, *d.NormalizationField, "NormalizationField"); err != nil {
			return nil, err
		}
	default:
		return nil, operation.Invalid("NormalizationType %s is not supported", norm)
	}
	var vals []float64
	if err := p.scan(func(f *feature.Feature) bool {
		v, ok := num(f.Values[col])
		if !ok {
			return true
		}
		switch norm {
		case gisxml.NormalizeByField:
			n, ok := num(f.Values[normCol])
			if !ok || n == 0 {
				return true
			}
			v /= n
		case gisxml.NormalizeByLog:
			if v <= 0 {
				return true
			}
			v = math.Log10(v)
		}
		vals = append(vals, v)
		return true
	}); err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, operation.Invalid("field %s has no values to classify", d.ClassificationField)
	}
	if norm == gisxml.NormalizeByPercentOfTotal {
		total := 0.0
		for _, v := range vals {
			total += v
		}
		if total != 0 {
			for i := range vals {
				vals[i] = vals[i] / total * 100
			}
		}
	}
	slices.Sort(vals)
	var breaks []float64 // class maxima, ascending, the last = max
	method := d.ClassificationMethod
	switch method {
	case gisxml.ClassifyEqualInterval:
		breaks = equalInterval(vals, k)
	case gisxml.ClassifyQuantile:
		breaks = quantile(vals, k)
	case gisxml.ClassifyNaturalBreaks, "":
		method = gisxml.ClassifyNaturalBreaks
		breaks = naturalBreaks(vals, k)
	case gisxml.ClassifyStandardDeviation:
		iv := 1.0
		if d.StandardDeviationInterval != nil && *d.StandardDeviationInterval > 0 {
			iv = *d.StandardDeviationInterval
		}
		breaks = stdDevBreaks(vals, iv)
	default:
		return nil, operation.Invalid("ClassificationMethod %s is not supported", method)
	}
	ramp, err := rampOf(d.ColorRamp)
	if err != nil {
		return nil, err
	}
	r := &gisxml.ClassBreaksRenderer{Field: p.src.fields[p.src.field(d.ClassificationField)].Name, MinimumValue: vals[0]}
	if norm != gisxml.NormalizeByNothing {
		r.NormalizationType = operation.Ptr(norm)
		r.NormalizationField = d.NormalizationField
	}
	lo := vals[0]
	for i, hi := range breaks {
		label := fmt.Sprintf("%s - %s", fmtNum(lo), fmtNum(hi))
		r.ClassBreakInfos = append(r.ClassBreakInfos, &gisxml.ClassBreakInfo{ClassMinimumValue: lo, ClassMaximumValue: hi, Label: operation.Ptr(label),
			Description: operation.Ptr(""), Symbol: symbolFor(p.src, d.BaseSymbol, ramp(i, len(breaks)))})
		lo = hi
	}
	return r, nil
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func equalInterval(vals []float64, k int) []float64 {
	lo, hi := vals[0], vals[len(vals)-1]
	out := make([]float64, 0, k)
	for i := 1; i < k; i++ {
		out = append(out, lo+(hi-lo)*float64(i)/float64(k))
	}
	return append(out, hi)
}

func quantile(vals []float64, k int) []float64 {
	var out []float64
	n := len(vals)
	for i := 1; i < k; i++ {
		b := vals[(i*n)/k-1+boolInt((i*n)/k == 0)]
		if len(out) == 0 || b > out[len(out)-1] {
			out = append(out, b)
		}
	}
	if hi := vals[n-1]; len(out) == 0 || hi > out[len(out)-1] {
		out = append(out, hi)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// naturalBreaks is Jenks' optimisation: the class maxima minimising the within-class squared
// deviations, by dynamic programming on the sorted values.
func naturalBreaks(sorted []float64, k int) []float64 {
	vals := sorted
	if len(vals) > maxJenksValues {
		vals = make([]float64, maxJenksValues)
		for i := range vals {
			vals[i] = sorted[i*(len(sorted)-1)/(maxJenksValues-1)]
		}
	}
	n := len(vals)
	if distinct := len(slices.Compact(slices.Clone(vals))); k > distinct {
		k = distinct
	}
	// lower[i][j]: the first value (1-based) of class j in the best split of the first i
	// values; cost[i][j]: that split's cost.
	lower := make([][]int, n+1)
	cost := make([][]float64, n+1)
	for i := range lower {
		lower[i] = make([]int, k+1)
		cost[i] = make([]float64, k+1)
		for j := range cost[i] {
			cost[i][j] = math.Inf(1)
		}
	}
	for j := 1; j <= k; j++ {
		lower[1][j], cost[1][j] = 1, 0
	}
	for i := 2; i <= n; i++ {
		var sum, sumSq, w float64
		for m := 1; m <= i; m++ {
			lo := i - m + 1 // the candidate class holds values lo..i
			v := vals[lo-1]
			w++
			sum += v
			sumSq += v * v
			dev := sumSq - sum*sum/w
			if lo > 1 {
				for j := 2; j <= k; j++ {
					if c := dev + cost[lo-1][j-1]; c <= cost[i][j] {
						lower[i][j], cost[i][j] = lo, c
					}
				}
			}
		}
		lower[i][1], cost[i][1] = 1, sumSq-sum*sum/w
	}
	out := make([]float64, k)
	i := n
	for j := k; j >= 1; j-- {
		out[j-1] = vals[i-1]
		i = lower[i][j] - 1
		if i < 1 && j > 1 {
			// Fewer useful classes than asked: drop the empty ones.
			return slices.Compact(out[j-1:])
		}
	}
	out[len(out)-1] = sorted[len(sorted)-1]
	return slices.Compact(out)
}

// stdDevBreaks puts class edges at the mean ± multiples of interval standard deviations,
// within the data's range.
func stdDevBreaks(vals []float64, interval float64) []float64 {
	mean, m2 := 0.0, 0.0
	for i, v := range vals {
		d := v - mean
		mean += d / float64(i+1)
		m2 += d * (v - mean)
	}
	sd := math.Sqrt(m2 / float64(len(vals)))
	lo, hi := vals[0], vals[len(vals)-1]
	if sd == 0 {
		return []float64{hi}
	}
	var out []float64
	step := sd * interval
	start := mean - step/2 - math.Ceil((mean-step/2-lo)/step)*step
	for b := start + step; b < hi; b += step {
		if b > lo {
			out = append(out, b)
		}
	}
	return append(out, hi)
}

func uniqueValues(p *plan, d *gisxml.UniqueValuesDef) (gisxml.FeatureRenderer, error) {
	if len(d.Fields) == 0 || len(d.Fields) > 3 {
		return nil, operation.Invalid("UniqueValuesDef needs 1 to 3 Fields (got %d)", len(d.Fields))
	}
	delim := ", "
	if d.FieldDelimiter != nil {
		delim = *d.FieldDelimiter
	}
	cols := make([]int, len(d.Fields))
	names := make([]string, len(d.Fields))
	for i, name := range d.Fields {
		j := p.src.field(name)
		if j < 0 {
			return nil, operation.Invalid("UniqueValuesDef/Fields: %s %d (%s) has no field %q (fields: %s)", p.src.kind, p.src.id, p.src.name, name, p.src.fieldNames())
		}
		cols[i], names[i] = p.src.fieldIndex[j], p.src.fields[j].Name
	}
	type entry struct {
		key  string
		vals []any
	}
	seen := map[string]bool{}
	var entries []entry
	if err := p.scan(func(f *feature.Feature) bool {
		parts := make([]string, len(cols))
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = f.Values[c]
			parts[i] = valueText(f.Values[c])
			if f.Values[c] == nil {
				parts[i] = "<Null>"
			}
		}
		k := strings.Join(parts, delim)
		if !seen[k] {
			seen[k] = true
			entries = append(entries, entry{k, vals})
		}
		return true
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b entry) int {
		for i := range a.vals {
			if c := compareValues(a.vals[i], b.vals[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	ramp, err := rampOf(d.ColorRamp)
	if err != nil {
		return nil, err
	}
	r := &gisxml.UniqueValueRenderer{Field1: names[0], FieldDelimiter: operation.Ptr(delim), DefaultLabel: operation.Ptr("<all other values>")}
	if len(names) > 1 {
		r.Field2 = operation.Ptr(names[1])
	}
	if len(names) > 2 {
		r.Field3 = operation.Ptr(names[2])
	}
	for i, e := range entries {
		r.UniqueValueInfos = append(r.UniqueValueInfos, &gisxml.UniqueValueInfo{Value: e.key, Label: operation.Ptr(e.key), Description: operation.Ptr(""),
			Symbol: symbolFor(p.src, d.BaseSymbol, ramp(i, len(entries)))})
	}
	return r, nil
}

// rampOf returns the colour of class i of n along a colour ramp.
func rampOf(cr gisxml.ColorRamp) (func(i, n int) color.NRGBA, error) {
	from, to := color.NRGBA{255, 255, 178, 255}, color.NRGBA{189, 0, 38, 255}
	if a, ok := cr.(*gisxml.AlgorithmicColorRamp); ok && a != nil {
		var err error
		if a.FromColor != nil {
			if from, err = cartography.ColorOf(a.FromColor); err != nil {
				return nil, operation.Invalid("ColorRamp/FromColor: %v", err)
			}
		}
		if a.ToColor != nil {
			if to, err = cartography.ColorOf(a.ToColor); err != nil {
				return nil, operation.Invalid("ColorRamp/ToColor: %v", err)
			}
		}
	} else if cr != nil {
		return nil, operation.Invalid("ColorRamp %s is not supported: use an AlgorithmicColorRamp", cr.GisType())
	}
	return func(i, n int) color.NRGBA {
		t := 0.0
		if n > 1 {
			t = float64(i) / float64(n-1)
		}
		mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*t)) }
		return color.NRGBA{mix(from.R, to.R), mix(from.G, to.G), mix(from.B, to.B), mix(from.A, to.A)}
	}, nil
}

// symbolFor is a class's symbol: the base symbol in the class colour, or a simple symbol
// fitting the geometry.
func symbolFor(src *source, base gisxml.Symbol, c color.NRGBA) gisxml.Symbol {
	col := &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: operation.Ptr(c.A)}, Red: c.R, Green: c.G, Blue: c.B}
	grey := &gisxml.RgbColor{Red: 110, Green: 110, Blue: 110}
	switch b := base.(type) {
	case *gisxml.SimpleFillSymbol:
		s := *b
		s.Color = col
		return &s
	case *gisxml.SimpleMarkerSymbol:
		s := *b
		s.Color = col
		return &s
	case *gisxml.SimpleLineSymbol:
		s := *b
		s.Color = col
		return &s
	}
	switch src.info.GeometryType {
	case feature.Point, feature.Multipoint:
		return &gisxml.SimpleMarkerSymbol{MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: col, Size: 6},
			Outline: true, OutlineSize: 0.75, OutlineColor: grey, Style: gisxml.SMSCircle}
	case feature.Polyline:
		return &gisxml.SimpleLineSymbol{LineSymbolFields: gisxml.LineSymbolFields{Color: col, Width: 1.5}, Style: gisxml.SLSSolid}
	}
	return &gisxml.SimpleFillSymbol{FillSymbolFields: gisxml.FillSymbolFields{Color: col,
		Outline: &gisxml.SimpleLineSymbol{LineSymbolFields: gisxml.LineSymbolFields{Color: grey, Width: 0.5}, Style: gisxml.SLSSolid}}, Style: gisxml.SFSSolid}
}
