package mvt

import (
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// Field numbers of vector_tile.proto (MVT 2.1).
const (
	tileLayers = 3

	layerVersion  = 15
	layerName     = 1
	layerFeatures = 2
	layerKeys     = 3
	layerValues   = 4
	layerExtent   = 5

	featureID       = 1
	featureTags     = 2
	featureType     = 3
	featureGeometry = 4

	valueString = 1
	valueDouble = 3
	valueInt    = 4
	valueUint   = 5
	valueSint   = 6
	valueBool   = 7
)

// valueKey identifies a value of the layer's value table.
type valueKey struct {
	kind byte // a value* field number
	s    string
	n    uint64
}

// layerWriter accumulates one layer: its encoded features and its key and
// value tables.
type layerWriter struct {
	name     string
	extent   uint32
	keys     []string // the layer's columns, in Layer.Fields order
	keyIndex []int    // position in the key table of keys[i], -1 until used
	usedKeys []string
	// The value table's index of each value written, by kind: strings by
	// their text, the others by their bits (a map of each of the fast key
	// types, since a tile's values are mostly distinct and looking them up
	// is most of what a feature costs).
	strs     map[string]uint32
	nums     [valueBool + 1]map[uint64]uint32
	nvalues  uint32
	valueBuf []byte // encoded Value messages, each with its tag and length
	features []byte // encoded Feature messages, each with its tag and length
	count    int
	scratch  []byte
	tags     []uint32
}

func newLayerWriter(name string, extent uint32, keys []string) *layerWriter {
	ki := make([]int, len(keys))
	for i := range ki {
		ki[i] = -1
	}
	return &layerWriter{name: name, extent: extent, keys: keys, keyIndex: ki}
}

// value returns the index of k in the value table, adding it when new.
func (w *layerWriter) value(k valueKey) uint32 {
	if k.kind == valueString {
		if vi, ok := w.strs[k.s]; ok {
			return vi
		}
		if w.strs == nil {
			w.strs = make(map[string]uint32, 64)
		}
		w.strs[k.s] = w.nvalues
	} else {
		m := w.nums[k.kind]
		if vi, ok := m[k.n]; ok {
			return vi
		}
		if m == nil {
			m = make(map[uint64]uint32, 64)
			w.nums[k.kind] = m
		}
		m[k.n] = w.nvalues
	}
	w.valueBuf = appendValue(w.valueBuf, k)
	w.nvalues++
	return w.nvalues - 1
}

// size is the layer's size so far, close enough for the byte limit.
func (w *layerWriter) size() int { return len(w.features) + len(w.valueBuf) + 16*len(w.usedKeys) }

// add writes one feature of geometry type gt with the geometry commands cmds.
func (w *layerWriter) add(f *feature.Feature, cols []int, gt geomType, cmds []uint32) error {
	w.tags = w.tags[:0]
	for i, c := range cols {
		k, ok := valueOf(f.Values[c])
		if !ok {
			continue
		}
		if w.keyIndex[i] < 0 {
			w.keyIndex[i] = len(w.usedKeys)
			w.usedKeys = append(w.usedKeys, w.keys[i])
		}
		w.tags = append(w.tags, uint32(w.keyIndex[i]), w.value(k))
	}
	b := w.scratch[:0]
	if f.ID >= 0 {
		b = protowire.AppendTag(b, featureID, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(f.ID))
	}
	if len(w.tags) > 0 {
		b = appendPacked(b, featureTags, w.tags)
	}
	b = protowire.AppendTag(b, featureType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(gt))
	b = appendPacked(b, featureGeometry, cmds)
	w.features = protowire.AppendTag(w.features, layerFeatures, protowire.BytesType)
	w.features = protowire.AppendBytes(w.features, b)
	w.scratch = b
	w.count++
	return nil
}

// appendTo appends the layer, as field 3 of a Tile, to dst.
func (w *layerWriter) appendTo(dst []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, layerVersion, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, layerName, protowire.BytesType)
	b = protowire.AppendString(b, w.name)
	b = append(b, w.features...)
	for _, k := range w.usedKeys {
		b = protowire.AppendTag(b, layerKeys, protowire.BytesType)
		b = protowire.AppendString(b, k)
	}
	b = append(b, w.valueBuf...)
	b = protowire.AppendTag(b, layerExtent, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(w.extent))
	dst = protowire.AppendTag(dst, tileLayers, protowire.BytesType)
	return protowire.AppendBytes(dst, b)
}

func appendPacked(b []byte, num protowire.Number, vs []uint32) []byte {
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(uint64(v))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, uint64(v))
	}
	return b
}

// valueOf maps an attribute value to a tile value; false for NULL and for
// what a tile cannot hold (BLOBs).
func valueOf(v any) (valueKey, bool) {
	switch v := v.(type) {
	case string:
		return valueKey{kind: valueString, s: v}, true
	case int64:
		if v < 0 {
			return valueKey{kind: valueSint, n: uint64(v)}, true
		}
		return valueKey{kind: valueUint, n: uint64(v)}, true
	case int:
		return valueOf(int64(v))
	case int32:
		return valueOf(int64(v))
	case float64:
		if math.IsNaN(v) {
			return valueKey{}, false
		}
		return valueKey{kind: valueDouble, n: math.Float64bits(v)}, true
	case float32:
		return valueOf(float64(v))
	case bool:
		var n uint64
		if v {
			n = 1
		}
		return valueKey{kind: valueBool, n: n}, true
	case time.Time:
		return valueOf(v.UnixMilli())
	}
	return valueKey{}, false
}

// appendValue appends a Value message, as field 4 of a Layer, to b.
func appendValue(b []byte, k valueKey) []byte {
	b = protowire.AppendTag(b, layerValues, protowire.BytesType)
	switch k.kind {
	case valueString:
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(k.s))))
		b = protowire.AppendTag(b, valueString, protowire.BytesType)
		return protowire.AppendString(b, k.s)
	case valueDouble:
		b = protowire.AppendVarint(b, 1+8)
		b = protowire.AppendTag(b, valueDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, k.n)
	case valueUint, valueBool:
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeVarint(k.n)))
		b = protowire.AppendTag(b, protowire.Number(k.kind), protowire.VarintType)
		return protowire.AppendVarint(b, k.n)
	case valueSint:
		z := protowire.EncodeZigZag(int64(k.n))
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeVarint(z)))
		b = protowire.AppendTag(b, valueSint, protowire.VarintType)
		return protowire.AppendVarint(b, z)
	}
	panic(fmt.Sprintf("mvt: value kind %d", k.kind))
}
