// Package mvtcheck decodes raw Mapbox Vector Tile bytes and checks them
// against the rules of the MVT 2.1 specification, independently of the
// encoder in package mvt: it is meant to run on every tile of a seeded
// level, so it reads the protobuf wire format directly (protowire) without
// building a message tree, and returns every problem it finds rather than
// the first.
//
// The rules checked (section numbers of the specification):
//
//   - 4.1: every layer has version 2, a non-empty name unique in the tile,
//     and a non-zero extent;
//   - 4.2: feature ids, when present, are unique within a layer;
//   - 4.4: tags come in key/value pairs that index the layer's keys and
//     values tables; every value has exactly one of its fields;
//   - 4.3: a known geometry type and a geometry that is not empty; command
//     counts and parameters: a point is one MoveTo of at least one point,
//     a linestring is MoveTo(1) then LineTo(≥1), repeated; a polygon ring
//     is MoveTo(1), LineTo(≥2), ClosePath(1); no command runs past the end
//     of the geometry, and coordinates stay within int32;
//   - 4.3.3.2: no LineTo of (0, 0);
//   - 4.3.4.4: the first ring of a polygon is exterior (positive area by
//     the surveyor's formula in tile coordinates), no ring has zero area.
//
// With Options.SimpleRings it also checks that rings are simple (no
// self-intersection or self-tangency, §4.3.4.4), with a sweep over the
// ring's edges.
//
// Options.MaxBuffer adds a check of the encoder's own contract: no
// coordinate further than that many units outside the extent.
//
// A tile may be gzip-compressed: Check inflates it first.
package mvtcheck

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Problem is one rule a tile breaks.
type Problem struct {
	// Layer is the layer's name ("" for a problem of the tile itself).
	Layer string
	// Feature is the feature's position in its layer, -1 when the problem
	// is not a feature's.
	Feature int
	// ID is the feature's id (0 when it has none).
	ID uint64
	// Rule says what is wrong.
	Rule string
}

func (p Problem) String() string {
	switch {
	case p.Layer == "" && p.Feature < 0:
		return p.Rule
	case p.Feature < 0:
		return fmt.Sprintf("layer %q: %s", p.Layer, p.Rule)
	}
	return fmt.Sprintf("layer %q feature %d (id %d): %s", p.Layer, p.Feature, p.ID, p.Rule)
}

// Options tunes Check.
type Options struct {
	// MaxBuffer, when positive, flags coordinates more than MaxBuffer
	// units outside [0, extent]. Zero: not checked.
	MaxBuffer int
	// SimpleRings also checks that every polygon ring is simple: no
	// self-intersection, no self-tangency, no fold (MVT 2.1 §4.3.4.4).
	// Opt-in because it costs a sweep per ring and tiles of other
	// producers often break it; this module's encoder guarantees it
	// (docs/vector-tiles.md, "Simple rings").
	SimpleRings bool
	// MaxProblems stops the check after that many problems (0: 1000).
	MaxProblems int
}

// Stats is what Check counted in a valid or invalid tile.
type Stats struct {
	// Layers and Features per layer name.
	Layers   int
	Features map[string]int
}

// Check decodes tile (gzip-compressed or not) and returns its problems,
// none for a valid tile, and counts of what it holds.
func Check(tile []byte, opts Options) ([]Problem, Stats) {
	if opts.MaxProblems <= 0 {
		opts.MaxProblems = 1000
	}
	c := &checker{opts: opts, stats: Stats{Features: map[string]int{}}}
	if len(tile) >= 2 && tile[0] == 0x1f && tile[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(tile))
		if err != nil {
			c.fail("", -1, 0, "gzip: %v", err)
			return c.problems, c.stats
		}
		raw, err := io.ReadAll(io.LimitReader(zr, 1<<30))
		if err != nil {
			c.fail("", -1, 0, "gzip: %v", err)
			return c.problems, c.stats
		}
		tile = raw
	}
	c.tile(tile)
	return c.problems, c.stats
}

type checker struct {
	opts     Options
	problems []Problem
	stats    Stats
	names    map[string]bool
	ids      map[uint64]struct{}
	tagBuf   []uint32 // reused between features
	geomBuf  []uint32
	ringBuf  []int64
	edgeBuf  []edge
}

func (c *checker) full() bool { return len(c.problems) >= c.opts.MaxProblems }

func (c *checker) fail(layer string, feat int, id uint64, format string, args ...any) {
	if c.full() {
		return
	}
	c.problems = append(c.problems, Problem{Layer: layer, Feature: feat, ID: id, Rule: fmt.Sprintf(format, args...)})
}

// field is one field of a protobuf message: its number and type, its
// value for varints and fixed-size fields, its bytes for length-delimited
// ones.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	v    uint64
	data []byte
}

// next reads the field at the start of b and returns it and its length
// (negative for a malformed field).
func next(b []byte) (field, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, n
	}
	f := field{num: num, typ: typ}
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(b[n:])
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(b[n:])
	case protowire.Fixed32Type:
		var v32 uint32
		v32, m = protowire.ConsumeFixed32(b[n:])
		f.v = uint64(v32)
	case protowire.BytesType:
		f.data, m = protowire.ConsumeBytes(b[n:])
	default:
		m = protowire.ConsumeFieldValue(num, typ, b[n:])
	}
	if m < 0 {
		return field{}, m
	}
	return f, n + m
}

// fields calls fn with each field of a message; false on a malformed one.
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, data []byte)) bool {
	for len(b) > 0 {
		f, n := next(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		fn(f.num, f.typ, f.v, f.data)
	}
	return true
}

func (c *checker) tile(b []byte) {
	c.names = map[string]bool{}
	ok := fields(b, func(num protowire.Number, typ protowire.Type, _ uint64, data []byte) {
		if num == 3 && typ == protowire.BytesType {
			c.layer(data)
		}
	})
	if !ok {
		c.fail("", -1, 0, "malformed protobuf in the tile")
	}
}

// layerData is a layer's fields, gathered before its features are checked
// (the keys and values may come after the features).
type layerData struct {
	name            string
	hasName         bool
	version, extent uint64
	hasExt          bool
	keys, values    int
	features        [][]byte
}

func (c *checker) layer(b []byte) {
	l := layerData{version: 1, extent: 4096}
	ok := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) {
		switch {
		case num == 15 && typ == protowire.VarintType:
			l.version = v
		case num == 1 && typ == protowire.BytesType:
			l.name, l.hasName = string(data), true
		case num == 2 && typ == protowire.BytesType:
			l.features = append(l.features, data)
		case num == 3 && typ == protowire.BytesType:
			l.keys++
		case num == 4 && typ == protowire.BytesType:
			l.values++
			c.value(l.name, data)
		case num == 5 && typ == protowire.VarintType:
			l.extent, l.hasExt = v, true
		}
	})
	c.stats.Layers++
	if !ok {
		c.fail(l.name, -1, 0, "malformed protobuf in the layer")
		return
	}
	if !l.hasName || l.name == "" {
		c.fail(l.name, -1, 0, "layer without a name")
	}
	if c.names[l.name] {
		c.fail(l.name, -1, 0, "layer name repeated in the tile")
	}
	c.names[l.name] = true
	if l.version != 2 {
		c.fail(l.name, -1, 0, "version %d, want 2", l.version)
	}
	if l.extent == 0 || l.extent > math.MaxInt32 {
		c.fail(l.name, -1, 0, "extent %d", l.extent)
	}
	c.stats.Features[l.name] += len(l.features)
	if c.ids == nil {
		c.ids = make(map[uint64]struct{}, len(l.features))
	} else {
		clear(c.ids)
	}
	for i, f := range l.features {
		if c.full() {
			return
		}
		c.feature(&l, i, f)
	}
}

func (c *checker) value(layer string, b []byte) {
	n := 0
	ok := fields(b, func(num protowire.Number, _ protowire.Type, _ uint64, _ []byte) {
		if num >= 1 && num <= 7 {
			n++
		}
	})
	if !ok || n != 1 {
		c.fail(layer, -1, 0, "a value with %d fields set, want 1", n)
	}
}

func (c *checker) feature(l *layerData, idx int, b []byte) {
	var (
		id      uint64
		hasID   bool
		gtype   uint64
		badPack bool
		hasGeom bool
		ok      = true
	)
	// A loop, not fields(): a closure would move these to the heap for
	// every feature.
	tags, geom := c.tagBuf[:0], c.geomBuf[:0]
	for len(b) > 0 {
		f, n := next(b)
		if n < 0 {
			ok = false
			break
		}
		b = b[n:]
		switch {
		case f.num == 1 && f.typ == protowire.VarintType:
			id, hasID = f.v, true
		case f.num == 2 && f.typ == protowire.BytesType:
			tags, badPack = unpack(tags, f.data, badPack)
		case f.num == 3 && f.typ == protowire.VarintType:
			gtype = f.v
		case f.num == 4 && f.typ == protowire.BytesType:
			hasGeom = true
			geom, badPack = unpack(geom, f.data, badPack)
		}
	}
	c.tagBuf, c.geomBuf = tags, geom
	if !ok || badPack {
		c.fail(l.name, idx, id, "malformed protobuf in the feature")
		return
	}
	if hasID {
		if _, dup := c.ids[id]; dup {
			c.fail(l.name, idx, id, "feature id repeated in the layer")
		}
		c.ids[id] = struct{}{}
	}
	if len(tags)%2 != 0 {
		c.fail(l.name, idx, id, "odd number of tags (%d)", len(tags))
	}
	for i := 0; i+1 < len(tags); i += 2 {
		if int(tags[i]) >= l.keys {
			c.fail(l.name, idx, id, "tag key %d out of the %d keys", tags[i], l.keys)
		}
		if int(tags[i+1]) >= l.values {
			c.fail(l.name, idx, id, "tag value %d out of the %d values", tags[i+1], l.values)
		}
	}
	if !hasGeom || len(geom) == 0 {
		c.fail(l.name, idx, id, "empty geometry")
		return
	}
	g := geomCheck{c: c, layer: l.name, idx: idx, id: id, cmds: geom, lo: math.MinInt64, hi: math.MaxInt64, ring: c.ringBuf[:0]}
	defer func() { c.ringBuf = g.ring }()
	if c.opts.MaxBuffer > 0 {
		g.lo, g.hi = -int64(c.opts.MaxBuffer), int64(l.extent)+int64(c.opts.MaxBuffer)
	}
	switch gtype {
	case 1:
		g.checkPoint()
	case 2:
		g.checkLine()
	case 3:
		g.checkPolygon()
	default:
		c.fail(l.name, idx, id, "geometry type %d, want 1, 2 or 3", gtype)
	}
}

// unpack appends the packed varints of data to dst.
func unpack(dst []uint32, data []byte, bad bool) ([]uint32, bool) {
	for len(data) > 0 {
		v, n := protowire.ConsumeVarint(data)
		if n < 0 || v > math.MaxUint32 {
			return dst, true
		}
		dst = append(dst, uint32(v))
		data = data[n:]
	}
	return dst, bad
}

// geomCheck walks one feature's command stream.
type geomCheck struct {
	c      *checker
	layer  string
	idx    int
	id     uint64
	cmds   []uint32
	pos    int
	x, y   int64
	lo, hi int64
	ring   []int64 // x0, y0, x1, y1 … of the current ring
	bad    bool
}

func (g *geomCheck) fail(format string, args ...any) {
	g.bad = true
	g.c.fail(g.layer, g.idx, g.id, format, args...)
}

// command reads the next command integer; ok false at the end.
func (g *geomCheck) command() (id, count int, ok bool) {
	if g.pos >= len(g.cmds) {
		return 0, 0, false
	}
	ci := g.cmds[g.pos]
	g.pos++
	return int(ci & 7), int(ci >> 3), true
}

// point reads one parameter pair and moves the cursor; false when the
// stream ends early or leaves int32.
func (g *geomCheck) point() bool {
	if g.pos+1 >= len(g.cmds) {
		g.fail("command parameters run past the end of the geometry")
		return false
	}
	// A uint32 zigzag decodes to an int32 range value.
	dx := protowire.DecodeZigZag(uint64(g.cmds[g.pos]))
	dy := protowire.DecodeZigZag(uint64(g.cmds[g.pos+1]))
	g.pos += 2
	g.x += dx
	g.y += dy
	if g.x < math.MinInt32 || g.x > math.MaxInt32 || g.y < math.MinInt32 || g.y > math.MaxInt32 {
		g.fail("coordinate (%d, %d) outside int32", g.x, g.y)
		return false
	}
	if g.x < g.lo || g.x > g.hi || g.y < g.lo || g.y > g.hi {
		g.fail("coordinate (%d, %d) outside the extent and its buffer", g.x, g.y)
		return false
	}
	return true
}

// checkPoint checks a POINT geometry: one MoveTo of at least one point.
func (g *geomCheck) checkPoint() {
	id, n, _ := g.command()
	if id != 1 || n < 1 {
		g.fail("point geometry starts with command %d count %d, want MoveTo of at least 1", id, n)
		return
	}
	for range n {
		if !g.point() {
			return
		}
	}
	if g.pos != len(g.cmds) {
		g.fail("point geometry has %d integers after its MoveTo", len(g.cmds)-g.pos)
	}
}

// checkLine checks a LINESTRING geometry: MoveTo(1) LineTo(≥1), repeated.
func (g *geomCheck) checkLine() {
	for g.pos < len(g.cmds) && !g.bad {
		if !g.part("linestring part", "linestring MoveTo", 1, false) {
			return
		}
	}
}

// part checks the MoveTo(1) LineTo(≥minLineTo) that starts a linestring part or a polygon
// ring, none of whose LineTos is of zero length; start and after name the part and its MoveTo
// in failures. With keep it puts the points in g.ring. It reports whether the part is good.
func (g *geomCheck) part(start, after string, minLineTo int, keep bool) bool {
	id, n, _ := g.command()
	if id != 1 || n != 1 {
		g.fail("%s starts with command %d count %d, want MoveTo(1)", start, id, n)
		return false
	}
	if !g.point() {
		return false
	}
	if keep {
		g.ring = append(g.ring[:0], g.x, g.y)
	}
	id, n, ok := g.command()
	if !ok || id != 2 || n < minLineTo {
		g.fail("%s followed by command %d count %d, want LineTo(≥%d)", after, id, n, minLineTo)
		return false
	}
	for range n {
		x, y := g.x, g.y
		if !g.point() {
			return false
		}
		if g.x == x && g.y == y {
			g.fail("LineTo of (0, 0) at (%d, %d)", x, y)
			return false
		}
		if keep {
			g.ring = append(g.ring, g.x, g.y)
		}
	}
	return true
}

// checkPolygon checks a POLYGON geometry: rings of MoveTo(1) LineTo(≥2)
// ClosePath(1), the first one exterior, none of zero area.
func (g *geomCheck) checkPolygon() {
	first := true
	for g.pos < len(g.cmds) && !g.bad {
		if !g.part("polygon ring", "polygon ring MoveTo", 2, true) {
			return
		}
		id, n, ok := g.command()
		if !ok || id != 7 || n != 1 {
			g.fail("polygon ring not closed by ClosePath(1) (command %d count %d)", id, n)
			return
		}
		a := surveyor(g.ring)
		switch {
		case a == 0:
			g.fail("polygon ring of zero area")
			return
		case first && a < 0:
			g.fail("polygon starts with an interior ring (negative area %d/2)", a)
			return
		}
		if g.c.opts.SimpleRings {
			var ok bool
			var x, y int64
			ok, x, y, g.c.edgeBuf = simpleRing(g.ring, g.c.edgeBuf)
			if !ok {
				g.fail("polygon ring not simple: it touches or crosses itself near (%d, %d)", x, y)
				return
			}
		}
		first = false
	}
}

// surveyor returns twice the ring's signed area, positive for an exterior
// ring in tile coordinates.
func surveyor(xy []int64) int64 {
	var s int64
	n := len(xy) / 2
	for i := range n {
		j := (i + 1) % n
		s += xy[2*i]*xy[2*j+1] - xy[2*j]*xy[2*i+1]
	}
	return s
}
