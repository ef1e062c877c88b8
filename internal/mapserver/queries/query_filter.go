package queries

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/where"
)

// This file turns a QueryFilter or SpatialFilter into a plan and runs it: the where clause
// (ANDed with the definition expression) parsed and checked once, the filter geometry converted
// once, and the whole plan handed to the layer's feature.Source as one feature.Query, so the
// provider pushes down what it can (a spatial index, SQL) and finishes the rest exactly.

// source is a layer or standalone table that queries run on.
type source struct {
	kind       string // "layer" or "table", for messages
	id         int
	name       string
	data       feature.Source
	info       feature.Info    // data.Info()
	fields     []feature.Field // published fields, OID first
	fieldIndex []int           // fields[i] is info.Fields[fieldIndex[i]]
	idField    string
	sr         proj.SR      // the map's SR; zero for tables
	m          *catalog.Map // the layer's map; nil for tables
	defExpr    string       // the definition expression from the service definition
	hasShape   bool
	raster     string // the raster field, typed gisFieldTypeRaster in record sets
	display    string // the display field
}

func layerSource(m *catalog.Map, l *catalog.Layer) *source {
	info := l.Data.Info()
	return &source{kind: "layer", id: l.ID, name: l.Name, data: l.Data, info: info, fields: l.Fields, fieldIndex: l.FieldIndex,
		idField: l.IDField, sr: m.SR, defExpr: l.Def.DefinitionExpression, hasShape: info.GeometryType != feature.None,
		raster: l.Def.RasterField, display: l.DisplayField, m: m}
}

// transformTo is the transformer from a layer's system to the system to (nil: none needed).
func transformTo(src *source, to proj.SR, what string) (*proj.Transformer, error) {
	if src.m == nil {
		return nil, nil
	}
	return operation.Transformer(src.m, src.sr, to, what)
}

// transformFrom is the transformer from the system from to a layer's (nil: none needed).
func transformFrom(src *source, from proj.SR, what string) (*proj.Transformer, error) {
	if src.m == nil {
		return nil, nil
	}
	return operation.Transformer(src.m, from, src.sr, what)
}

func tableSource(t *catalog.Table) *source {
	return &source{kind: "table", id: t.ID, name: t.Name, data: t.Data, info: t.Data.Info(), fields: t.Fields, fieldIndex: t.FieldIndex,
		idField: t.IDField, defExpr: t.Def.DefinitionExpression, display: t.DisplayField}
}

// layerOf finds a map's layer by ID as a query source.
func layerOf(c *operation.Call, mapName string, id int) (*catalog.Map, *source, error) {
	m, err := operation.MapOf(c, mapName)
	if err != nil {
		return nil, nil, err
	}
	l, ok := m.Layer(id)
	if !ok {
		return nil, nil, operation.NotFound("layer %d is not in map %s", id, m.Name)
	}
	return m, layerSource(m, l), nil
}

// sourceByID finds a map's layer or standalone table by ID, with the layer's catalog entry (nil
// for a table).
func sourceByID(m *catalog.Map, id int) (*source, *catalog.Layer, error) {
	if l, ok := m.Layer(id); ok {
		return layerSource(m, l), l, nil
	}
	if t, ok := m.Table(id); ok {
		return tableSource(t), nil, nil
	}
	return nil, nil, operation.NotFound("layer or table %d is not in map %s", id, m.Name)
}

// sourceOf finds layer or table id of a map of the call's service ("" names the default map).
func sourceOf(c *operation.Call, mapName string, id int) (*source, *catalog.Layer, error) {
	m, err := operation.MapOf(c, mapName)
	if err != nil {
		return nil, nil, err
	}
	return sourceByID(m, id)
}

// describedSource finds the layer or table a MapTableDescription names, and the definition
// expression it carries.
func describedSource(c *operation.Call, mapName string, d gisxml.MapTableDescription) (*catalog.Map, *source, *catalog.Layer, string, error) {
	m, err := operation.MapOf(c, mapName)
	if err != nil {
		return nil, nil, nil, "", err
	}
	src, defExpr, err := tableOf(c, mapName, d)
	if err != nil {
		return nil, nil, nil, "", err
	}
	l, _ := m.Layer(src.id)
	if src.kind == "table" {
		l = nil
	}
	return m, src, l, defExpr, nil
}

// tableOf finds a map's standalone table (or layer: ArcGIS accepts both) from a
// MapTableDescription, and the definition expression it carries.
func tableOf(c *operation.Call, mapName string, d gisxml.MapTableDescription) (*source, string, error) {
	m, err := operation.MapOf(c, mapName)
	if err != nil {
		return nil, "", err
	}
	switch d := d.(type) {
	case *gisxml.StandaloneTableDescription:
		if t, ok := m.Table(d.ID); ok {
			s := tableSource(t)
			if d.DefinitionExpression != nil {
				return s, *d.DefinitionExpression, nil
			}
			return s, "", nil
		}
		return nil, "", operation.NotFound("table %d is not in map %s", d.ID, m.Name)
	case *gisxml.LayerDescription:
		if l, ok := m.Layer(d.LayerID); ok {
			return layerSource(m, l), d.DefinitionExpression, nil
		}
		return nil, "", operation.NotFound("layer %d is not in map %s", d.LayerID, m.Name)
	case nil:
		return nil, "", operation.Invalid("MapTableDescription is required")
	}
	return nil, "", operation.Invalid("MapTableDescription: %s is not supported", d.GisType())
}

// orderKey is one ORDER BY term.
type orderKey struct {
	col  int // position in info.Fields
	desc bool
}

// plan is a compiled query.
type plan struct {
	ctx      context.Context
	src      *source
	where    *where.Expr      // nil matches everything; checked against the source's fields
	spatial  *feature.Spatial // nil: no spatial filter
	fids     []int64          // non-nil: only these ids (sorted, unique)
	out      []int            // the output fields, as positions in src.fields
	shape    bool             // the output includes the shape
	outSR    proj.SR
	toOut    *proj.Transformer // nil when outSR is the source SR
	order    []orderKey
	distinct bool
}

// filterOf returns the QueryFilter part of a filter and its SpatialFilter, if it is one.
func filterOf(qf gisxml.QueryFilterKind) (*gisxml.QueryFilter, *gisxml.SpatialFilter) {
	switch f := qf.(type) {
	case nil:
		return &gisxml.QueryFilter{}, nil
	case *gisxml.SpatialFilter:
		if f == nil {
			return &gisxml.QueryFilter{}, nil
		}
		return &f.QueryFilter, f
	case *gisxml.QueryFilter:
		if f == nil {
			return &gisxml.QueryFilter{}, nil
		}
		return f, nil
	}
	// TimeQueryFilter and ImageQueryFilter extend SpatialFilter; their time part is ignored
	// (no layer is time-aware: GetServerInfo says SupportsTime false).
	if sp, ok := qf.(interface{ SpatialFilterPart() *gisxml.SpatialFilter }); ok && sp.SpatialFilterPart() != nil {
		sf := sp.SpatialFilterPart()
		return &sf.QueryFilter, sf
	}
	return qf.QueryFilterPart(), nil
}

// newPlan compiles a filter on a source. The source's own definition expression always
// applies; extra is the request's (a LayerDescription's or table description's) definition
// expression, applied too when it differs. Both are ANDed with the where clause.
func newPlan(ctx context.Context, src *source, qf gisxml.QueryFilterKind, extra string) (*plan, error) {
	f, sf := filterOf(qf)
	p := &plan{ctx: ctx, src: src, outSR: src.sr}
	if strings.TrimSpace(extra) == strings.TrimSpace(src.defExpr) {
		extra = ""
	}
	if err := p.compileWhere(f.WhereClause, src.defExpr, extra); err != nil {
		return nil, err
	}
	if err := p.subFields(f.SubFields); err != nil {
		return nil, err
	}
	if f.FIDSet != nil {
		ids := make([]int64, 0, len(f.FIDSet.FIDArray))
		for _, id := range f.FIDSet.FIDArray {
			ids = append(ids, int64(id))
		}
		slices.Sort(ids)
		p.fids = slices.Compact(ids)
	}
	if f.PostfixClause != nil {
		if err := p.postfix(*f.PostfixClause); err != nil {
			return nil, err
		}
	}
	if f.PrefixClause != nil {
		switch strings.ToUpper(strings.TrimSpace(*f.PrefixClause)) {
		case "":
		case "DISTINCT":
			p.distinct = true
		default:
			return nil, operation.Invalid("PrefixClause %q is not supported: only DISTINCT is", *f.PrefixClause)
		}
	}
	if len(f.FilterDefs) > 0 {
		return nil, operation.Invalid("FilterDefs are not supported")
	}
	if f.OutputSpatialReference != nil && src.hasShape {
		out := operation.SRIn(f.OutputSpatialReference)
		t, err := transformTo(src, out, "OutputSpatialReference")
		if err != nil {
			return nil, err
		}
		if t != nil {
			p.outSR, p.toOut = out, t
		}
	}
	if sf != nil {
		if err := p.compileSpatial(sf); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *plan) compileWhere(clause, defExpr, extra string) error {
	var parts []*where.Expr
	for _, c := range []struct{ what, text string }{{"WhereClause", clause}, {"definition expression", defExpr}, {"DefinitionExpression", extra}} {
		if strings.TrimSpace(c.text) == "" {
			continue
		}
		e, err := where.Parse(c.text)
		if errors.Is(err, where.ErrLimit) {
			return operation.OverLimit(limits.WhereClause, "%s: %v", c.what, err)
		}
		if err != nil {
			return operation.Invalid("%s: %v", c.what, err)
		}
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return nil
	}
	e := where.And(parts...)
	if _, err := e.Compile(feature.WhereSchema(p.src.info.Fields)); errors.Is(err, where.ErrLimit) {
		return operation.OverLimit(limits.WhereClause, "WhereClause: %v (%s)", err, limits.WhereClause)
	} else if err != nil {
		return operation.Invalid("WhereClause: %v", err)
	}
	p.where = e
	return nil
}

// subFields resolves SubFields: empty or "*" is every published field (and the shape).
func (p *plan) subFields(sub *string) error {
	all := func() {
		p.out = make([]int, len(p.src.fields))
		for i := range p.out {
			p.out[i] = i
		}
		p.shape = p.src.hasShape
	}
	if sub == nil || strings.TrimSpace(*sub) == "" || strings.TrimSpace(*sub) == "*" {
		all()
		return nil
	}
	seen := map[int]bool{}
	for name := range strings.SplitSeq(*sub, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case name == "*":
			all()
			return nil
		case p.src.hasShape && strings.EqualFold(name, "Shape"):
			p.shape = true
			continue
		}
		i := p.src.field(name)
		if i < 0 {
			return operation.Invalid("SubFields: %s %d (%s) has no field %q (fields: %s)", p.src.kind, p.src.id, p.src.name, name, p.src.fieldNames())
		}
		if !seen[i] {
			seen[i] = true
			p.out = append(p.out, i)
		}
	}
	return nil
}

// field finds a published field by name, case-insensitively; -1 if none.
func (s *source) field(name string) int {
	for i, f := range s.fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

func (s *source) fieldNames() string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.Name
	}
	if s.hasShape {
		names = append(names, "Shape")
	}
	return strings.Join(names, ", ")
}

// postfix reads an ORDER BY clause: ORDER BY field [ASC|DESC] {, field [ASC|DESC]}.
func (p *plan) postfix(clause string) error {
	words := strings.Fields(clause)
	if len(words) == 0 {
		return nil
	}
	if len(words) < 3 || !strings.EqualFold(words[0], "ORDER") || !strings.EqualFold(words[1], "BY") {
		return operation.Invalid("PostfixClause %q is not supported: only ORDER BY field [ASC|DESC], … is", clause)
	}
	keys, err := p.src.orderKeys(strings.Join(words[2:], " "), "PostfixClause")
	if err != nil {
		return err
	}
	p.order = keys
	return nil
}

// orderKeys reads "field [ASC|DESC], …" against the source's published fields.
func (s *source) orderKeys(list, what string) ([]orderKey, error) {
	var keys []orderKey
	for term := range strings.SplitSeq(list, ",") {
		ws := strings.Fields(term)
		if len(ws) == 0 || len(ws) > 2 {
			return nil, operation.Invalid("%s: bad ORDER BY term %q (want field [ASC|DESC])", what, strings.TrimSpace(term))
		}
		i := s.field(ws[0])
		if i < 0 {
			return nil, operation.Invalid("%s: %s %d (%s) has no field %q", what, s.kind, s.id, s.name, ws[0])
		}
		k := orderKey{col: s.fieldIndex[i]}
		if len(ws) == 2 {
			switch strings.ToUpper(ws[1]) {
			case "ASC":
			case "DESC":
				k.desc = true
			default:
				return nil, operation.Invalid("%s: bad ORDER BY direction %q (want ASC or DESC)", what, ws[1])
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func (p *plan) compileSpatial(sf *gisxml.SpatialFilter) error {
	switch sf.SpatialRel {
	case "", gisxml.SpatialRelUndefined, gisxml.SpatialRelIntersects, gisxml.SpatialRelEnvelopeIntersects,
		gisxml.SpatialRelIndexIntersects, gisxml.SpatialRelTouches, gisxml.SpatialRelOverlaps, gisxml.SpatialRelCrosses,
		gisxml.SpatialRelWithin, gisxml.SpatialRelContains, gisxml.SpatialRelRelation:
	default:
		return operation.Invalid("SpatialRel %q is not a gisSpatialRelEnum value", sf.SpatialRel)
	}
	if sf.FilterGeometry == nil {
		if sf.SpatialRel == gisxml.SpatialRelUndefined || sf.SpatialRel == "" {
			return nil // a SpatialFilter used as a plain QueryFilter
		}
		return operation.Invalid("SpatialFilter: FilterGeometry is required with SpatialRel %s", sf.SpatialRel)
	}
	if !p.src.hasShape {
		return operation.Invalid("SpatialFilter: %s %d (%s) has no geometry", p.src.kind, p.src.id, p.src.name)
	}
	g, gsr, err := operation.GeometryIn(sf.FilterGeometry, "FilterGeometry")
	if err != nil {
		return err
	}
	tr, err := transformFrom(p.src, gsr, "FilterGeometry")
	if err != nil {
		return err
	}
	if tr != nil {
		if g = operation.Reproject(g, tr); g == nil {
			return operation.Invalid("FilterGeometry: the geometry lies outside the area where %s is defined", gsr.Name())
		}
	}
	rel, ok := relations[sf.SpatialRel]
	if !ok {
		rel = feature.Intersects
	}
	t := &feature.Spatial{Rel: rel, Geom: g}
	if rel == feature.Relate {
		pat := strings.ToUpper(strings.TrimSpace(sf.SpatialRelDescription))
		if len(pat) != 9 || strings.Trim(pat, "TF*012") != "" {
			return operation.Invalid("SpatialRelDescription %q is not a DE-9IM pattern (9 characters of T, F, *, 0, 1, 2)", sf.SpatialRelDescription)
		}
		t.Pattern = pat
	}
	p.spatial = t
	return nil
}

// relations maps gisSpatialRelEnum values to the relations a feature.Source tests. The
// undefined relation is Intersects.
var relations = map[gisxml.SpatialRelEnum]feature.Relation{
	gisxml.SpatialRelIntersects:         feature.Intersects,
	gisxml.SpatialRelEnvelopeIntersects: feature.EnvelopeIntersects,
	gisxml.SpatialRelIndexIntersects:    feature.EnvelopeIntersects,
	gisxml.SpatialRelTouches:            feature.Touches,
	gisxml.SpatialRelOverlaps:           feature.Overlaps,
	gisxml.SpatialRelCrosses:            feature.Crosses,
	gisxml.SpatialRelWithin:             feature.Within,
	gisxml.SpatialRelContains:           feature.Contains,
	gisxml.SpatialRelRelation:           feature.Relate,
}

// query returns the plan as a feature.Query: every filter, the order, and the columns to read
// (nil: every published non-BLOB column; the provider reads what the where clause needs itself).
func (p *plan) query() *feature.Query {
	q := &feature.Query{Where: p.where, Spatial: p.spatial, IDs: p.fids, NoGeometry: !p.src.hasShape}
	for _, k := range p.order {
		q.Order = append(q.Order, feature.Order{Column: k.col, Desc: k.desc})
	}
	return q
}

// scan calls fn for every feature that passes the plan, in id order, until fn returns false.
func (p *plan) scan(fn func(*feature.Feature) bool) error {
	return p.run(p.query(), fn)
}

// run scans q on the plan's source and translates the source's errors.
func (p *plan) run(q *feature.Query, fn func(*feature.Feature) bool) error {
	err := p.src.data.Scan(p.ctx, q, func(f *feature.Feature) error {
		if !fn(f) {
			return errStopScan
		}
		return nil
	})
	if errors.Is(err, errStopScan) {
		return nil
	}
	return p.src.fault(err)
}

// errStopScan ends a scan early.
var errStopScan = errors.New("scan stopped")

// fault turns a provider's error into one the caller can act on: a refused query is the
// client's fault; anything else keeps its text (it names the source) and becomes a server fault.
func (s *source) fault(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, feature.ErrQuery):
		return operation.Invalid("%s %d (%s): %v", s.kind, s.id, s.name, err)
	}
	return fmt.Errorf("%s %d (%s): %w", s.kind, s.id, s.name, err)
}

// byID returns the features among ids that pass the plan, by id; cols are the columns to read,
// as in feature.Query.
func (p *plan) byID(ids gisxml.ArrayOfInt, cols []int) (map[int64]*feature.Feature, error) {
	q := p.query()
	q.IDs, q.Columns, q.Order = make([]int64, len(ids)), cols, nil
	for i, id := range ids {
		q.IDs[i] = int64(id)
	}
	out := make(map[int64]*feature.Feature, len(ids))
	err := p.run(q, func(f *feature.Feature) bool { out[f.ID] = f; return true })
	return out, err
}

// count returns the number of matching features, counted by the source.
func (p *plan) count() (int, error) {
	q := p.query()
	q.Order, q.NoGeometry, q.Columns = nil, true, []int{}
	n, err := p.src.data.Count(p.ctx, q)
	return n, p.src.fault(err)
}

// collect returns the matching features sorted by the ORDER BY keys, then by ID.
func (p *plan) collect() ([]*feature.Feature, error) { return p.collectN(-1) }

// collectN is collect stopping after n features (n < 0: no limit); DISTINCT is applied by the
// caller, so it reads everything.
func (p *plan) collectN(n int) ([]*feature.Feature, error) {
	q := p.query()
	if n >= 0 && !p.distinct {
		q.Limit = n
		if n == 0 {
			return nil, nil
		}
	}
	var out []*feature.Feature
	err := p.run(q, func(f *feature.Feature) bool { out = append(out, f); return true })
	return out, err
}

// compareValues orders attribute values: NULL first, then numbers, strings, dates by value.
func compareValues(a, b any) int { return feature.CompareValues(a, b) }
