package mvtcheck_test

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
)

// feat is a feature to write by hand, wrong where a case wants it.
type feat struct {
	id    *uint64
	tags  []uint32
	gtype uint64
	geom  []uint32
}

type lay struct {
	name    string
	version uint64
	extent  uint64
	keys    []string
	values  int // string values "v0", "v1", …
	feats   []feat
	noName  bool
}

func u64(v uint64) *uint64 { return &v }

func packed(b []byte, num protowire.Number, vs []uint32) []byte {
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, uint64(v))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func build(layers ...lay) []byte {
	var tile []byte
	for _, l := range layers {
		var b []byte
		b = protowire.AppendTag(b, 15, protowire.VarintType)
		b = protowire.AppendVarint(b, l.version)
		if !l.noName {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, l.name)
		}
		for _, f := range l.feats {
			var fb []byte
			if f.id != nil {
				fb = protowire.AppendTag(fb, 1, protowire.VarintType)
				fb = protowire.AppendVarint(fb, *f.id)
			}
			if f.tags != nil {
				fb = packed(fb, 2, f.tags)
			}
			fb = protowire.AppendTag(fb, 3, protowire.VarintType)
			fb = protowire.AppendVarint(fb, f.gtype)
			fb = packed(fb, 4, f.geom)
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendBytes(b, fb)
		}
		for _, k := range l.keys {
			b = protowire.AppendTag(b, 3, protowire.BytesType)
			b = protowire.AppendString(b, k)
		}
		for i := range l.values {
			var v []byte
			v = protowire.AppendTag(v, 1, protowire.BytesType)
			v = protowire.AppendString(v, "v"+string(rune('0'+i)))
			b = protowire.AppendTag(b, 4, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		}
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, l.extent)
		tile = protowire.AppendTag(tile, 3, protowire.BytesType)
		tile = protowire.AppendBytes(tile, b)
	}
	return tile
}

func z(v int32) uint32 { return uint32((v << 1) ^ (v >> 31)) }

func cmd(id, n uint32) uint32 { return n<<3 | id }

// squareCW is the exterior ring (0,0) (10,0) (10,10) (0,10): positive area
// in tile coordinates (y down).
var squareCW = []uint32{cmd(1, 1), z(0), z(0), cmd(2, 3), z(10), z(0), z(0), z(10), z(-10), z(0), cmd(7, 1)}

// squareCCW is the same square wound the other way.
var squareCCW = []uint32{cmd(1, 1), z(0), z(0), cmd(2, 3), z(0), z(10), z(10), z(0), z(0), z(-10), cmd(7, 1)}

func good() lay {
	return lay{name: "l", version: 2, extent: 4096, keys: []string{"k"}, values: 2, feats: []feat{
		{id: u64(1), tags: []uint32{0, 1}, gtype: 3, geom: squareCW},
		{id: u64(2), gtype: 1, geom: []uint32{cmd(1, 2), z(5), z(5), z(1), z(1)}},
		{id: u64(3), gtype: 2, geom: []uint32{cmd(1, 1), z(5), z(5), cmd(2, 2), z(1), z(1), z(3), z(0), cmd(1, 1), z(7), z(7), cmd(2, 1), z(1), z(0)}},
		{gtype: 3, geom: append(append([]uint32{}, squareCW...), cmd(1, 1), z(2), z(2), cmd(2, 3), z(0), z(2), z(2), z(0), z(0), z(-2), cmd(7, 1))},
	}}
}

// TestCheckValid checks a valid tile, plain and gzipped, has no problems
// and is counted.
func TestCheckValid(t *testing.T) {
	tile := build(good(), lay{name: "m", version: 2, extent: 512})
	probs, st := mvtcheck.Check(tile, mvtcheck.Options{MaxBuffer: 64})
	if len(probs) != 0 || st.Layers != 2 || st.Features["l"] != 4 {
		t.Fatalf("problems %v, stats %+v", probs, st)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(tile)
	zw.Close()
	if probs, st := mvtcheck.Check(zb.Bytes(), mvtcheck.Options{}); len(probs) != 0 || st.Features["l"] != 4 {
		t.Fatalf("gzipped: problems %v, stats %+v", probs, st)
	}
	ls, err := mvtcheck.Decode(tile)
	if err != nil || len(ls) != 2 || len(ls[0].Features) != 4 || ls[0].Features[0].Properties["k"] != "v1" {
		t.Fatalf("decode = %+v, %v", ls, err)
	}
}

// TestCheckProblems breaks one rule per case and wants that rule named;
// the last case breaks several and wants them all.
func TestCheckProblems(t *testing.T) {
	with := func(f func(*lay)) []byte { l := good(); f(&l); return build(l) }
	cases := []struct {
		name string
		tile []byte
		want []string
	}{
		{"version 1", with(func(l *lay) { l.version = 1 }), []string{"version 1"}},
		{"no name", with(func(l *lay) { l.noName = true }), []string{"without a name"}},
		{"extent 0", with(func(l *lay) { l.extent = 0 }), []string{"extent 0"}},
		{"repeated layer", build(good(), good()), []string{"repeated in the tile"}},
		{"repeated id", with(func(l *lay) { l.feats[1].id = u64(1) }), []string{"id repeated"}},
		{"key out of range", with(func(l *lay) { l.feats[0].tags = []uint32{1, 0} }), []string{"tag key 1"}},
		{"value out of range", with(func(l *lay) { l.feats[0].tags = []uint32{0, 2} }), []string{"tag value 2"}},
		{"odd tags", with(func(l *lay) { l.feats[0].tags = []uint32{0} }), []string{"odd number"}},
		{"empty geometry", with(func(l *lay) { l.feats[0].geom = nil }), []string{"empty geometry"}},
		{"unknown type", with(func(l *lay) { l.feats[0].gtype = 0 }), []string{"geometry type 0"}},
		{"exterior wound backwards", with(func(l *lay) { l.feats[0].geom = squareCCW }), []string{"starts with an interior ring"}},
		{"ring not closed", with(func(l *lay) { l.feats[0].geom = squareCW[:len(squareCW)-1] }), []string{"not closed"}},
		{"ring of two points", with(func(l *lay) {
			l.feats[0].geom = []uint32{cmd(1, 1), z(0), z(0), cmd(2, 1), z(3), z(3), cmd(7, 1)}
		}), []string{"want LineTo(≥2)"}},
		{"zero-area ring", with(func(l *lay) {
			l.feats[0].geom = []uint32{cmd(1, 1), z(0), z(0), cmd(2, 2), z(3), z(3), z(3), z(3), cmd(7, 1)}
		}), []string{"zero area"}},
		{"zero LineTo", with(func(l *lay) {
			l.feats[2].geom = []uint32{cmd(1, 1), z(5), z(5), cmd(2, 2), z(1), z(1), z(0), z(0)}
		}), []string{"LineTo of (0, 0)"}},
		{"line without LineTo", with(func(l *lay) { l.feats[2].geom = []uint32{cmd(1, 1), z(5), z(5)} }), []string{"want LineTo(≥1)"}},
		{"point MoveTo 0", with(func(l *lay) { l.feats[1].geom = []uint32{cmd(1, 0)} }), []string{"want MoveTo of at least 1"}},
		{"point with LineTo", with(func(l *lay) { l.feats[1].geom = []uint32{cmd(1, 1), z(1), z(1), cmd(2, 1), z(1), z(1)} }), []string{"integers after its MoveTo"}},
		{"truncated parameters", with(func(l *lay) { l.feats[1].geom = []uint32{cmd(1, 2), z(1), z(1), z(1)} }), []string{"past the end"}},
		{"outside the buffer", with(func(l *lay) { l.feats[1].geom = []uint32{cmd(1, 1), z(-65), z(0)} }), []string{"outside the extent and its buffer"}},
		{"malformed protobuf", []byte{0x1a, 0x05, 0x01}, []string{"malformed protobuf"}},
		{"all at once", with(func(l *lay) {
			l.version = 3
			l.feats[1].id = u64(1)
			l.feats[0].geom = squareCCW
			l.feats[3].tags = []uint32{5, 5}
		}), []string{"version 3", "id repeated", "interior ring", "tag key 5", "tag value 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs, _ := mvtcheck.Check(c.tile, mvtcheck.Options{MaxBuffer: 64})
			if len(probs) != len(c.want) {
				t.Errorf("problems = %v, want %d", probs, len(c.want))
			}
			for _, w := range c.want {
				found := false
				for _, p := range probs {
					found = found || strings.Contains(p.String(), w)
				}
				if !found {
					t.Errorf("no problem says %q in %v", w, probs)
				}
			}
		})
	}
}

// ringGeom writes one ring of absolute points as a polygon's commands.
func ringGeom(pts ...[2]int32) []uint32 {
	var cx, cy int32
	out := []uint32{cmd(1, 1)}
	for i, p := range pts {
		if i == 1 {
			out = append(out, cmd(2, uint32(len(pts)-1)))
		}
		out = append(out, z(p[0]-cx), z(p[1]-cy))
		cx, cy = p[0], p[1]
	}
	return append(out, cmd(7, 1))
}

// TestCheckSimpleRings checks the opt-in rule on rings that cross, touch
// or fold onto themselves, and on simple ones.
func TestCheckSimpleRings(t *testing.T) {
	cases := []struct {
		name   string
		geom   []uint32
		simple bool
	}{
		{"square", squareCW, true},
		{"concave", ringGeom([2]int32{0, 0}, [2]int32{10, 0}, [2]int32{10, 10}, [2]int32{5, 3}, [2]int32{0, 10}), true},
		// a pentagram: its edges cross five times, its area is positive
		{"pentagram", ringGeom([2]int32{10, 0}, [2]int32{16, 19}, [2]int32{0, 7}, [2]int32{20, 7}, [2]int32{4, 19}), false},
		// touches itself at (5,5): two lobes sharing a vertex
		{"self-tangent", ringGeom([2]int32{0, 0}, [2]int32{10, 0}, [2]int32{5, 5}, [2]int32{10, 10}, [2]int32{0, 10}, [2]int32{5, 5}), false},
		// a spike out of the top edge and back
		{"fold", ringGeom([2]int32{0, 0}, [2]int32{5, 0}, [2]int32{5, -5}, [2]int32{5, 0}, [2]int32{10, 0}, [2]int32{10, 10}, [2]int32{0, 10}), false},
		// Sutherland-Hodgman's overlap along a clip edge: out and back along x = 0
		{"overlapping edges", ringGeom([2]int32{0, 0}, [2]int32{10, 0}, [2]int32{10, 10}, [2]int32{0, 10}, [2]int32{0, 6}, [2]int32{4, 5}, [2]int32{0, 4}, [2]int32{0, 8}, [2]int32{-1, 2}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := good()
			l.feats[0].geom = c.geom
			tile := build(l)
			probs, _ := mvtcheck.Check(tile, mvtcheck.Options{SimpleRings: true})
			notSimple := false
			for _, p := range probs {
				notSimple = notSimple || strings.Contains(p.Rule, "not simple")
			}
			if notSimple == c.simple {
				t.Errorf("simple = %v, problems %v", c.simple, probs)
			}
			if probs, _ := mvtcheck.Check(tile, mvtcheck.Options{}); !c.simple && len(probs) > 0 && strings.Contains(probs[0].Rule, "not simple") {
				t.Errorf("the rule ran without SimpleRings")
			}
		})
	}
}
