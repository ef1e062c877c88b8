package mvtcheck

import (
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	"google.golang.org/protobuf/encoding/protowire"
)

// Layer is a decoded layer.
type Layer struct {
	Name     string
	Version  uint64
	Extent   uint64
	Features []Feature
}

// Feature is a decoded feature, its geometry in tile coordinates: a Point
// or MultiPoint, a LineString or MultiLineString, a Polygon or
// MultiPolygon (rings grouped by the sign of their area, closed).
type Feature struct {
	ID         uint64
	HasID      bool
	Geometry   orb.Geometry
	Properties map[string]any
}

// ErrMalformed is wrapped by Decode's errors.
var ErrMalformed = errors.New("mvtcheck: malformed tile")

// Decode decodes an uncompressed tile for tests and tools. It trusts the
// command stream only as far as it can walk it: run Check for the rules.
func Decode(tile []byte) ([]Layer, error) {
	var layers []Layer
	var err error
	ok := fields(tile, func(num protowire.Number, typ protowire.Type, _ uint64, data []byte) {
		if num != 3 || typ != protowire.BytesType || err != nil {
			return
		}
		var l Layer
		l, err = decodeLayer(data)
		layers = append(layers, l)
	})
	if !ok {
		return nil, fmt.Errorf("%w: protobuf", ErrMalformed)
	}
	return layers, err
}

func decodeLayer(b []byte) (Layer, error) {
	l := Layer{Version: 1, Extent: 4096}
	var keys []string
	var values []any
	var feats [][]byte
	ok := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) {
		switch {
		case num == 15:
			l.Version = v
		case num == 1:
			l.Name = string(data)
		case num == 2:
			feats = append(feats, data)
		case num == 3:
			keys = append(keys, string(data))
		case num == 4:
			values = append(values, decodeValue(data))
		case num == 5:
			l.Extent = v
		}
	})
	if !ok {
		return l, fmt.Errorf("%w: layer %q", ErrMalformed, l.Name)
	}
	for _, fb := range feats {
		var f Feature
		var tags, geom []uint32
		var gt uint64
		bad := false
		fields(fb, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) {
			switch num {
			case 1:
				f.ID, f.HasID = v, true
			case 2:
				tags, bad = unpack(tags, data, bad)
			case 3:
				gt = v
			case 4:
				geom, bad = unpack(geom, data, bad)
			}
		})
		if bad || len(tags)%2 != 0 {
			return l, fmt.Errorf("%w: layer %q feature %d", ErrMalformed, l.Name, f.ID)
		}
		f.Properties = make(map[string]any, len(tags)/2)
		for i := 0; i+1 < len(tags); i += 2 {
			if int(tags[i]) >= len(keys) || int(tags[i+1]) >= len(values) {
				return l, fmt.Errorf("%w: layer %q feature %d: tag out of range", ErrMalformed, l.Name, f.ID)
			}
			f.Properties[keys[tags[i]]] = values[tags[i+1]]
		}
		g, err := decodeGeometry(gt, geom)
		if err != nil {
			return l, fmt.Errorf("layer %q feature %d: %w", l.Name, f.ID, err)
		}
		f.Geometry = g
		l.Features = append(l.Features, f)
	}
	return l, nil
}

func decodeValue(b []byte) any {
	var out any
	fields(b, func(num protowire.Number, _ protowire.Type, v uint64, data []byte) {
		switch num {
		case 1:
			out = string(data)
		case 2:
			out = float64(math.Float32frombits(uint32(v)))
		case 3:
			out = math.Float64frombits(v)
		case 4:
			out = int64(v)
		case 5:
			out = v
		case 6:
			out = protowire.DecodeZigZag(v)
		case 7:
			out = v != 0
		}
	})
	return out
}

func decodeGeometry(gt uint64, cmds []uint32) (orb.Geometry, error) {
	var x, y int64
	var parts [][]orb.Point
	var cur []orb.Point
	for i := 0; i < len(cmds); {
		id, n := cmds[i]&7, int(cmds[i]>>3)
		i++
		if id == 7 {
			if len(cur) > 0 {
				cur = append(cur, cur[0])
			}
			continue
		}
		if id != 1 && id != 2 {
			return nil, fmt.Errorf("%w: command %d", ErrMalformed, id)
		}
		if i+2*n > len(cmds) {
			return nil, fmt.Errorf("%w: parameters past the end", ErrMalformed)
		}
		for range n {
			x += protowire.DecodeZigZag(uint64(cmds[i]))
			y += protowire.DecodeZigZag(uint64(cmds[i+1]))
			i += 2
			p := orb.Point{float64(x), float64(y)}
			if id == 1 && gt != 1 {
				if cur != nil {
					parts = append(parts, cur)
				}
				cur = []orb.Point{p}
			} else {
				cur = append(cur, p)
			}
		}
	}
	if cur != nil {
		parts = append(parts, cur)
	}
	switch gt {
	case 1:
		if len(parts) == 1 && len(parts[0]) == 1 {
			return parts[0][0], nil
		}
		if len(parts) == 1 {
			return orb.MultiPoint(parts[0]), nil
		}
	case 2:
		if len(parts) == 1 {
			return orb.LineString(parts[0]), nil
		}
		mls := make(orb.MultiLineString, len(parts))
		for i, p := range parts {
			mls[i] = p
		}
		return mls, nil
	case 3:
		var mp orb.MultiPolygon
		for _, p := range parts {
			r := orb.Ring(p)
			a := 0.0
			for j := 0; j+1 < len(r); j++ {
				a += r[j][0]*r[j+1][1] - r[j+1][0]*r[j][1]
			}
			if a > 0 || len(mp) == 0 {
				mp = append(mp, orb.Polygon{r})
			} else {
				mp[len(mp)-1] = append(mp[len(mp)-1], r)
			}
		}
		if len(mp) == 1 {
			return mp[0], nil
		}
		return mp, nil
	}
	return nil, fmt.Errorf("%w: geometry type %d with %d parts", ErrMalformed, gt, len(parts))
}
