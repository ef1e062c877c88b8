package gpkg

import (
	"fmt"
	"unicode/utf8"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// ReadLayer loads a whole feature table into memory, reprojecting every
// geometry to the SR to (see proj.Transform for the supported pairs).
// Rows with a NULL geometry are kept, with a nil Geom.
func (f *File) ReadLayer(table string, to proj.SR) (*feature.Layer, error) {
	t, ok := f.Table(table)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", ErrNoTable, table, f.path)
	}
	if t.GeometryColumn == "" {
		return nil, fmt.Errorf("gpkg: table %s in %s has no geometry column", t.Name, f.path)
	}
	fn, err := proj.Transform(t.SR, to)
	if err != nil {
		return nil, fmt.Errorf("gpkg: table %s: %w", t.Name, err)
	}
	if t.SR.Same(to) {
		fn = nil
	}
	return f.read(t, to, t.GeometryType, func(r *Row) feature.Feature {
		g := r.Geom
		if g != nil && fn != nil {
			g = proj.Geometry(g, fn)
		}
		return feature.Feature{ID: r.ID, Geom: g}
	})
}

// ReadAttributes loads a table's rows without geometry, as a layer of
// geometry type None (a standalone table).
func (f *File) ReadAttributes(table string) (*feature.Layer, error) {
	t, ok := f.Table(table)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", ErrNoTable, table, f.path)
	}
	return f.read(t, proj.SR{}, feature.None, func(r *Row) feature.Feature {
		return feature.Feature{ID: r.ID}
	})
}

func (f *File) read(t *Table, sr proj.SR, gt feature.GeometryType, mk func(*Row) feature.Feature) (*feature.Layer, error) {
	fields := append([]feature.Field(nil), t.Fields...)
	longest := make([]int, len(fields))
	var feats []feature.Feature
	err := f.scan(t, nil, t.GeometryColumn != "" && gt != feature.None, func(r *Row) error {
		ft := mk(r)
		ft.Values = make([]any, len(r.Values))
		copy(ft.Values, r.Values)
		for i, v := range r.Values {
			if s, ok := v.(string); ok {
				longest[i] = max(longest[i], utf8.RuneCountInString(s))
			}
		}
		feats = append(feats, ft)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range fields {
		if fields[i].Type == feature.FieldString && fields[i].Length == 0 {
			fields[i].Length = max(255, longest[i])
		}
	}
	return feature.NewLayer(t.Name, sr, gt, fields, feats), nil
}
