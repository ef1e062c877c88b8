// Package geojson imports GeoJSON FeatureCollections (RFC 7946) as feature
// tables, so a service can publish a layer straight from a .geojson file.
//
// The whole file is parsed at Open. Its schema is inferred: the fields are
// the union of the features' property names in order of first appearance;
// a field whose values are all integers is Integer, all numbers Double,
// all booleans SmallInteger (0/1), anything else String. Object IDs are the
// features' integer "id" members when every feature has a distinct one,
// else their 1-based positions; they are published as the OID field
// OBJECTID. Coordinates are WGS 84 longitude/latitude (EPSG:4326), as the
// RFC requires.
//
// GeoPackage remains the recommended format (indexed, typed, compact);
// GeoJSON is for small layers and quick imports.
package geojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paulmach/orb"
	ogj "github.com/paulmach/orb/geojson"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// OIDField is the name of the object-ID field of a GeoJSON table.
const OIDField = "OBJECTID"

// ErrFormat is wrapped by errors about files that are not a GeoJSON
// FeatureCollection mapfarm can read.
var ErrFormat = errors.New("geojson: invalid file")

// File is a parsed GeoJSON FeatureCollection.
type File struct {
	// Name is the file name without extension.
	Name string
	// Fields are OBJECTID followed by the inferred property fields.
	Fields []feature.Field
	// GeometryType is the common geometry type of the features (None when
	// they mix points, lines and polygons, or have no geometry).
	GeometryType feature.GeometryType
	rows         []row
}

type row struct {
	id   int64
	geom orb.Geometry
	vals []any
}

// SR returns EPSG:4326, the only SR RFC 7946 allows.
func (f *File) SR() proj.SR { return proj.SR{WKID: proj.WGS84} }

type rawFeature struct {
	ID         json.RawMessage `json:"id"`
	Geometry   *ogj.Geometry   `json:"geometry"`
	Properties orderedProps    `json:"properties"`
}

type orderedProps struct {
	keys []string
	vals []any
}

func (p *orderedProps) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("properties must be an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		p.keys = append(p.keys, t.(string))
		p.vals = append(p.vals, v)
	}
	return nil
}

// Open reads and parses a GeoJSON FeatureCollection.
func Open(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("geojson: %w", err)
	}
	return Parse(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), data)
}

// Parse parses a GeoJSON FeatureCollection read from the file whose name (without its
// extension) is name.
func Parse(name string, data []byte) (*File, error) {
	path := name
	var doc struct {
		Type     string       `json:"type"`
		Features []rawFeature `json:"features"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if doc.Type != "FeatureCollection" {
		return nil, fmt.Errorf("%w: %s: type is %q, want FeatureCollection", ErrFormat, path, doc.Type)
	}
	f := &File{Name: name}
	f.build(doc.Features)
	return f, nil
}

// kind tracks what values a property holds, for type inference.
type kind struct {
	ints, floats, bools, strs, other bool
	longest                          int
}

func (f *File) build(feats []rawFeature) {
	index := map[string]int{}
	var names []string
	var kinds []*kind
	ids := make([]int64, len(feats))
	idsOK := true
	seen := map[int64]bool{}
	gts := map[feature.GeometryType]bool{}
	for i, rf := range feats {
		var id int64
		if err := json.Unmarshal(rf.ID, &id); err != nil || seen[id] {
			idsOK = false
		}
		seen[id] = true
		ids[i] = id
		for j, k := range rf.Properties.keys {
			n, ok := index[k]
			if !ok {
				n = len(names)
				index[k] = n
				names = append(names, k)
				kinds = append(kinds, &kind{})
			}
			kd := kinds[n]
			switch v := rf.Properties.vals[j].(type) {
			case nil:
			case json.Number:
				if _, err := v.Int64(); err == nil {
					kd.ints = true
				} else {
					kd.floats = true
				}
			case bool:
				kd.bools = true
			case string:
				kd.strs = true
				kd.longest = max(kd.longest, len([]rune(v)))
			default:
				kd.other = true
			}
		}
		if rf.Geometry != nil && rf.Geometry.Coordinates != nil {
			gts[geometryType(rf.Geometry.Coordinates)] = true
		}
	}
	f.Fields = []feature.Field{{Name: OIDField, Alias: OIDField, Type: feature.FieldOID, Length: 8}}
	types := make([]feature.FieldType, len(names))
	for i, n := range names {
		kd := kinds[i]
		fl := feature.Field{Name: n, Alias: n, Nullable: true}
		switch {
		case kd.strs || kd.other || (kd.bools && (kd.ints || kd.floats)):
			fl.Type, fl.Length = feature.FieldString, max(255, kd.longest)
		case kd.floats:
			fl.Type, fl.Length = feature.FieldDouble, 8
		case kd.ints:
			fl.Type, fl.Length = feature.FieldInteger, 8
		case kd.bools:
			fl.Type, fl.Length = feature.FieldSmallInteger, 2
		default: // only nulls
			fl.Type, fl.Length = feature.FieldString, 255
		}
		types[i] = fl.Type
		f.Fields = append(f.Fields, fl)
	}
	switch {
	case len(gts) == 1:
		for g := range gts {
			f.GeometryType = g
		}
	case len(gts) == 2 && gts[feature.Point] && gts[feature.Multipoint]:
		f.GeometryType = feature.Multipoint
	}
	for i, rf := range feats {
		r := row{id: int64(i + 1), vals: make([]any, len(f.Fields))}
		if idsOK {
			r.id = ids[i]
		}
		r.vals[0] = r.id
		if rf.Geometry != nil {
			r.geom = rf.Geometry.Coordinates
		}
		for j, k := range rf.Properties.keys {
			n := index[k]
			r.vals[n+1] = convert(rf.Properties.vals[j], types[n])
		}
		f.rows = append(f.rows, r)
	}
}

func geometryType(g orb.Geometry) feature.GeometryType {
	switch g.(type) {
	case orb.Point:
		return feature.Point
	case orb.MultiPoint:
		return feature.Multipoint
	case orb.LineString, orb.MultiLineString:
		return feature.Polyline
	case orb.Polygon, orb.MultiPolygon:
		return feature.Polygon
	}
	return feature.None
}

func convert(v any, t feature.FieldType) any {
	switch x := v.(type) {
	case nil:
		return nil
	case json.Number:
		switch t {
		case feature.FieldInteger:
			n, _ := x.Int64()
			return n
		case feature.FieldDouble:
			n, _ := x.Float64()
			return n
		}
		return x.String()
	case bool:
		if t == feature.FieldSmallInteger {
			if x {
				return int64(1)
			}
			return int64(0)
		}
		return fmt.Sprint(x)
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ReadLayer returns the features as a layer in the SR to, reprojected from
// 4326. Geometries are copied, so the File can be read again.
func (f *File) ReadLayer(to proj.SR) (*feature.Layer, error) {
	fn, err := proj.Transform(f.SR(), to)
	if err != nil {
		return nil, fmt.Errorf("geojson: %s: %w", f.Name, err)
	}
	if f.GeometryType == feature.None {
		return nil, fmt.Errorf("%w: %s: features have no common geometry type", ErrFormat, f.Name)
	}
	feats := make([]feature.Feature, len(f.rows))
	for i, r := range f.rows {
		var g orb.Geometry
		if r.geom != nil {
			g = proj.Geometry(orb.Clone(r.geom), fn)
		}
		feats[i] = feature.Feature{ID: r.id, Geom: g, Values: append([]any(nil), r.vals...)}
	}
	return feature.NewLayer(f.Name, to, f.GeometryType, append([]feature.Field(nil), f.Fields...), feats), nil
}

// ReadAttributes returns the rows without geometry (a standalone table).
func (f *File) ReadAttributes() *feature.Layer {
	feats := make([]feature.Feature, len(f.rows))
	for i, r := range f.rows {
		feats[i] = feature.Feature{ID: r.id, Values: append([]any(nil), r.vals...)}
	}
	return feature.NewLayer(f.Name, proj.SR{}, feature.None, append([]feature.Field(nil), f.Fields...), feats)
}
