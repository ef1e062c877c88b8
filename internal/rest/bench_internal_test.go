package rest

import (
	"encoding/json"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// benchRecordSet is a record set of n polygon features of 5 attributes and a 33-vertex ring,
// shaped as QueryData answers it.
func benchRecordSet(n int) *gisxml.RecordSet {
	str := func(s string) *string { return &s }
	rs := &gisxml.RecordSet{Fields: &gisxml.Fields{FieldArray: gisxml.ArrayOfField{
		{Name: "fid", Type: "gisFieldTypeOID"}, {Name: "NAME", Type: "gisFieldTypeString", AliasName: str("Name")},
		{Name: "POP", Type: "gisFieldTypeInteger"}, {Name: "AREA", Type: "gisFieldTypeDouble"}, {Name: "UPDATED", Type: "gisFieldTypeDate"},
		{Name: "Shape", Type: "gisFieldTypeGeometry", GeometryDef: &gisxml.GeometryDef{GeometryType: "gisGeometryPolygon"}},
	}}}
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		ring := make(gisxml.ArrayOfPoint, 0, 33)
		for k := range 33 {
			a := -2 * math.Pi * float64(k%32) / 32 // clockwise, closed
			ring = append(ring, &gisxml.PointN{X: 1000*float64(i) + 123.456*math.Cos(a), Y: 5000 + 123.456*math.Sin(a)})
		}
		rs.Records = append(rs.Records, &gisxml.Record{Values: gisxml.ArrayOfValue{
			i + 1, "Feature \"name\" é", 12345 + i, 3.14159 * float64(i), when,
			&gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{{Path: gisxml.Path{PointArray: ring}}}},
		}})
	}
	return rs
}

// The encoder writes valid JSON holding every feature.
func TestEncodeFeatureSetIsValidJSON(t *testing.T) {
	var w jsonWriter
	encodeFeatureSet(&w, benchRecordSet(3), "NAME", "fid", true)
	var v struct {
		Features []struct {
			Attributes map[string]any
			Geometry   struct{ Rings [][][2]float64 }
		}
		ExceededTransferLimit bool
	}
	if err := json.Unmarshal(w.bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, w.bytes())
	}
	if len(v.Features) != 3 || !v.ExceededTransferLimit || v.Features[2].Attributes["NAME"] != "Feature \"name\" é" ||
		v.Features[2].Attributes["UPDATED"] != 1577934245000.0 || len(v.Features[2].Geometry.Rings[0]) != 33 {
		t.Errorf("decoded %+v", v.Features[2])
	}
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEncodeFeatures measures the JSON encoding of query answers (1,000-feature pages of
// 33-vertex polygons with 5 attributes); the target is at least 100,000 features/s. features/s
// is by the wall clock; features/cpu-s by the process's CPU time, which a machine shared with
// other builds does not skew.
func BenchmarkEncodeFeatures(b *testing.B) {
	const n = 1000 // a maxRecordCount page
	rs := benchRecordSet(n)
	var w jsonWriter
	b.ReportAllocs()
	cpu := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		w = jsonWriter{b: w.b[:0]}
		encodeFeatureSet(&w, rs, "NAME", "fid", false)
	}
	b.StopTimer()
	b.SetBytes(int64(len(w.b)))
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "features/s")
	b.ReportMetric(float64(n*b.N)/(cpuTime(b)-cpu).Seconds(), "features/cpu-s")
}
