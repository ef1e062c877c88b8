package servicedef

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Load reads, parses and validates a service definition file. Every
// source is decoded by the provider of providers that it names, which
// resolves relative paths against the file's directory and checks the
// data it can read at load (a GeoPackage table exists and has the fields
// the definition names); defaults are filled in.
//
// A file that cannot be read is reported as a plain error; anything wrong
// inside it (YAML syntax, unknown keys, bad values, missing data, …) as a
// *ValidationError listing every problem with its line and column.
func Load(path string, providers *provider.Registry) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("servicedef: %w", err)
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("servicedef: %w", err)
	}
	l := &loader{
		decoder:   decoder{file: path},
		dir:       filepath.Dir(abs),
		providers: providers,
	}
	defer l.close()
	cfg := &Config{File: abs}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		l.yamlError(err)
		return nil, &ValidationError{Problems: l.sorted()}
	}
	if len(doc.Content) == 0 {
		l.errorf(nil, "file is empty: want a mapping with a services list")
		return nil, &ValidationError{Problems: l.sorted()}
	}
	l.config(doc.Content[0], cfg)
	if len(l.probs) > 0 {
		return nil, &ValidationError{Problems: l.sorted()}
	}
	return cfg, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax or type error into problems.
func (l *loader) yamlError(err error) {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			line, _ := strconv.Atoi(sm[1])
			// yaml.v3 reports the line of the construct the parser was in,
			// which is sometimes the line before the actual mistake
			l.probs = append(l.probs, Problem{File: l.file, Line: line, Msg: "invalid YAML (here or on the next line): " + sm[2]})
			continue
		}
		l.probs = append(l.probs, Problem{File: l.file, Msg: "invalid YAML: " + m})
	}
}

// loader adds what validation against the data needs to the decoder.
type loader struct {
	decoder
	dir       string
	providers *provider.Registry
	sessions  *provider.Sessions // the providers' sessions, once the connections are known
	conns     map[string]*Connection
}

func (l *loader) close() {
	if l.sessions != nil {
		l.sessions.Close()
	}
}

// providerSessions returns the providers' sessions of this load, started with the
// connections decoded so far.
func (l *loader) providerSessions() *provider.Sessions {
	if l.sessions == nil {
		l.sessions = l.providers.NewSessions(provider.Env{Connections: l.conns})
	}
	return l.sessions
}

var serviceName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func (l *loader) config(n *yaml.Node, cfg *Config) {
	var servicesNode, connsNode *yaml.Node
	if !l.fields(n, "the top level", map[string]func(*yaml.Node){
		"services":    func(v *yaml.Node) { servicesNode = v },
		"connections": func(v *yaml.Node) { connsNode = v },
	}) {
		return
	}
	if connsNode != nil {
		cfg.Connections = l.connections(connsNode)
		l.conns = cfg.Connections
	}
	if servicesNode == nil || isNull(servicesNode) {
		l.errorf(n, "missing required key \"services\"")
		return
	}
	names := map[string]*yaml.Node{}
	l.seq(servicesNode, "services", func(it *yaml.Node) {
		s, nameNode := l.service(it)
		if s == nil {
			return
		}
		k := strings.ToLower(s.Name)
		if prev, dup := names[k]; dup && s.Name != "" {
			l.errorf(nameNode, "duplicate service name %q (first defined at line %d)", s.Name, prev.Line)
		} else {
			names[k] = nameNode
		}
		cfg.Services = append(cfg.Services, s)
	})
	if len(cfg.Services) == 0 && len(l.probs) == 0 {
		l.errorf(servicesNode, "services must list at least one service")
	}
}

func (l *loader) service(n *yaml.Node) (*Service, *yaml.Node) {
	s := &Service{}
	var nameNode, mapsNode *yaml.Node
	if !l.fields(n, "service", map[string]func(*yaml.Node){
		"name":          func(v *yaml.Node) { nameNode = v; s.Name = l.str(v, "name") },
		"description":   func(v *yaml.Node) { s.Description = l.str(v, "description") },
		"copyrightText": func(v *yaml.Node) { s.CopyrightText = l.str(v, "copyrightText") },
		"documentInfo":  func(v *yaml.Node) { s.DocumentInfo = l.documentInfo(v) },
		"maps":          func(v *yaml.Node) { mapsNode = v },
	}) {
		return nil, nil
	}
	switch {
	case nameNode == nil:
		l.errorf(n, "service: missing required key \"name\"")
		nameNode = n
	case !serviceName.MatchString(s.Name):
		l.errorf(nameNode, "service name %q must be letters, digits and underscores", s.Name)
	}
	if mapsNode == nil || isNull(mapsNode) {
		l.errorf(n, "service %q: missing required key \"maps\"", s.Name)
		return s, nameNode
	}
	names := map[string]*yaml.Node{}
	l.seq(mapsNode, "maps", func(it *yaml.Node) {
		m, mn := l.mapDef(it, s)
		if m == nil {
			return
		}
		k := strings.ToLower(m.Name)
		if prev, dup := names[k]; dup {
			l.errorf(mn, "duplicate map name %q in service %q (first defined at line %d)", m.Name, s.Name, prev.Line)
		} else {
			names[k] = mn
		}
		s.Maps = append(s.Maps, m)
	})
	if len(s.Maps) == 0 && resolve(mapsNode).Kind == yaml.SequenceNode {
		l.errorf(mapsNode, "service %q must have at least one map", s.Name)
	}
	return s, nameNode
}

func (l *loader) documentInfo(n *yaml.Node) DocumentInfo {
	var di DocumentInfo
	l.fields(n, "documentInfo", map[string]func(*yaml.Node){
		"title":    func(v *yaml.Node) { di.Title = l.str(v, "title") },
		"subject":  func(v *yaml.Node) { di.Subject = l.str(v, "subject") },
		"author":   func(v *yaml.Node) { di.Author = l.str(v, "author") },
		"category": func(v *yaml.Node) { di.Category = l.str(v, "category") },
		"keywords": func(v *yaml.Node) { di.Keywords = l.str(v, "keywords") },
		"comments": func(v *yaml.Node) { di.Comments = l.str(v, "comments") },
	})
	return di
}

// mapCtx carries what layer validation needs to know about its map.
type mapCtx struct {
	m      *Map
	srNode *yaml.Node
	nextID int
	ids    map[int]*yaml.Node
	names  map[string]*yaml.Node
	infos  map[int]*provider.Schema // the source tables of the layers and tables, by ID
}

func (l *loader) mapDef(n *yaml.Node, s *Service) (*Map, *yaml.Node) {
	m := &Map{Name: "Layers", CopyrightText: s.CopyrightText, BackgroundColor: symbology.Color{R: 255, G: 255, B: 255, A: 255}}
	var nameNode, layersNode, tablesNode, srNode, cacheNode, relNode *yaml.Node
	if !l.fields(n, "map", map[string]func(*yaml.Node){
		"name":             func(v *yaml.Node) { nameNode = v; m.Name = l.str(v, "name") },
		"description":      func(v *yaml.Node) { m.Description = l.str(v, "description") },
		"copyrightText":    func(v *yaml.Node) { m.CopyrightText = l.str(v, "copyrightText") },
		"spatialReference": func(v *yaml.Node) { srNode = v; m.SpatialReference = l.sr(v) },
		"backgroundColor":  func(v *yaml.Node) { m.BackgroundColor = l.color(v, "backgroundColor") },
		"initialExtent":    func(v *yaml.Node) { m.InitialExtent = l.extent(v, "initialExtent") },
		"referenceScale":   func(v *yaml.Node) { m.ReferenceScale = l.nonNeg(v, "referenceScale") },
		"layers":           func(v *yaml.Node) { layersNode = v },
		"tables":           func(v *yaml.Node) { tablesNode = v },
		"relationships":    func(v *yaml.Node) { relNode = v },
		"cache":            func(v *yaml.Node) { cacheNode = v },
	}) {
		return nil, nil
	}
	if nameNode == nil {
		nameNode = n
	} else if strings.TrimSpace(m.Name) == "" {
		l.errorf(nameNode, "map name must not be empty")
	}
	if srNode == nil {
		l.errorf(n, "map %q: missing required key \"spatialReference\" (a WKID such as 3857 or 4326)", m.Name)
	}
	ctx := &mapCtx{m: m, srNode: srNode, ids: map[int]*yaml.Node{}, names: map[string]*yaml.Node{}, infos: map[int]*provider.Schema{}}
	if layersNode != nil {
		l.seq(layersNode, "layers", func(it *yaml.Node) {
			if ly := l.layer(it, ctx); ly != nil {
				m.Layers = append(m.Layers, ly)
			}
		})
	}
	if tablesNode != nil {
		l.seq(tablesNode, "tables", func(it *yaml.Node) {
			if t := l.table(it, ctx); t != nil {
				m.Tables = append(m.Tables, t)
			}
		})
	}
	if relNode != nil {
		m.Relationships = l.relationships(relNode, ctx)
	}
	if cacheNode != nil && !isNull(cacheNode) {
		m.Cache = l.cache(cacheNode, m)
	}
	return m, nameNode
}

// sr decodes a WKID given as a number or {wkid: N}.
func (l *loader) sr(n *yaml.Node) proj.SR {
	n = resolve(n)
	var wkid int
	var at *yaml.Node
	if n != nil && n.Kind == yaml.MappingNode {
		l.fields(n, "spatialReference", map[string]func(*yaml.Node){
			"wkid": func(v *yaml.Node) { at = v; wkid = l.int(v, "wkid") },
		})
		if at == nil {
			l.errorf(n, "spatialReference: missing required key \"wkid\"")
			return proj.SR{}
		}
	} else {
		at = n
		before := len(l.probs)
		wkid = l.int(n, "spatialReference")
		if len(l.probs) > before {
			return proj.SR{}
		}
	}
	if wkid <= 0 {
		l.errorf(resolve(at), "spatialReference must be a positive WKID, not %d", wkid)
	}
	return proj.SR{WKID: wkid}
}

// extent decodes [xmin, ymin, xmax, ymax] or {xmin, ymin, xmax, ymax}.
func (l *loader) extent(n *yaml.Node, what string) *orb.Bound {
	n = resolve(n)
	var v [4]float64
	switch {
	case n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == 4:
		for i, it := range n.Content {
			v[i] = l.float(it, what)
		}
	case n != nil && n.Kind == yaml.MappingNode:
		got := 0
		set := func(i int, k string) func(*yaml.Node) {
			return func(x *yaml.Node) { v[i] = l.float(x, what+"."+k); got++ }
		}
		l.fields(n, what, map[string]func(*yaml.Node){
			"xmin": set(0, "xmin"), "ymin": set(1, "ymin"), "xmax": set(2, "xmax"), "ymax": set(3, "ymax"),
		})
		if got != 4 {
			l.errorf(n, "%s needs xmin, ymin, xmax and ymax", what)
			return nil
		}
	default:
		l.errorf(n, "%s must be [xmin, ymin, xmax, ymax]", what)
		return nil
	}
	if v[0] >= v[2] || v[1] >= v[3] {
		l.errorf(n, "%s is empty or inverted: xmin must be < xmax and ymin < ymax", what)
		return nil
	}
	return &orb.Bound{Min: orb.Point{v[0], v[1]}, Max: orb.Point{v[2], v[3]}}
}

// claim assigns an ID and registers the name of a layer or table.
func (l *loader) claim(ctx *mapCtx, n, idNode, nameNode *yaml.Node, id *int, name string, kind string) {
	if idNode == nil {
		*id = ctx.nextID
		idNode = n
	} else if *id < 0 {
		l.errorf(idNode, "%s id must not be negative", kind)
	}
	if prev, dup := ctx.ids[*id]; dup {
		l.errorf(idNode, "duplicate layer/table id %d in map %q (first used at line %d)", *id, ctx.m.Name, prev.Line)
	} else {
		ctx.ids[*id] = idNode
	}
	if *id >= ctx.nextID {
		ctx.nextID = *id + 1
	}
	if nameNode == nil {
		l.errorf(n, "%s: missing required key \"name\"", kind)
		return
	}
	if strings.TrimSpace(name) == "" {
		l.errorf(nameNode, "%s name must not be empty", kind)
		return
	}
	k := strings.ToLower(name)
	if prev, dup := ctx.names[k]; dup {
		l.errorf(nameNode, "duplicate layer/table name %q in map %q (first used at line %d)", name, ctx.m.Name, prev.Line)
	} else {
		ctx.names[k] = nameNode
	}
}

// fieldRef remembers where a field name was written, for checks against
// the source table.
type fieldRef struct {
	name string
	at   *yaml.Node
	what string
}

func (l *loader) layer(n *yaml.Node, ctx *mapCtx) *Layer {
	ly := &Layer{Visible: true, ScaleSymbols: true}
	qn := &queryNodes{}
	var (
		idNode, nameNode, srcNode, gtNode, fieldsNode, dfNode, rendNode, defNode *yaml.Node
		minNode, labelsNode, vtNode                                              *yaml.Node
		refs                                                                     []fieldRef
	)
	if !l.fields(n, "layer", merge(map[string]func(*yaml.Node){
		"id":            func(v *yaml.Node) { idNode = v; ly.ID = l.int(v, "id") },
		"name":          func(v *yaml.Node) { nameNode = v; ly.Name = l.str(v, "name") },
		"description":   func(v *yaml.Node) { ly.Description = l.str(v, "description") },
		"copyrightText": func(v *yaml.Node) { ly.CopyrightText = l.str(v, "copyrightText") },
		"source":        func(v *yaml.Node) { srcNode = v },
		"geometryType":  func(v *yaml.Node) { gtNode = v },
		"fields":        func(v *yaml.Node) { fieldsNode = v },
		"displayField":  func(v *yaml.Node) { dfNode = v; ly.DisplayField = l.str(v, "displayField") },
		"visible":       func(v *yaml.Node) { ly.Visible = l.bool(v, "visible") },
		"scaleSymbols":  func(v *yaml.Node) { ly.ScaleSymbols = l.bool(v, "scaleSymbols") },
		"minScale":      func(v *yaml.Node) { minNode = v; ly.MinScale = l.nonNeg(v, "minScale") },
		"maxScale":      func(v *yaml.Node) { ly.MaxScale = l.nonNeg(v, "maxScale") },
		"definitionExpression": func(v *yaml.Node) {
			defNode = v
			ly.DefinitionExpression = l.str(v, "definitionExpression")
		},
		"renderer":    func(v *yaml.Node) { rendNode = v },
		"labels":      func(v *yaml.Node) { labelsNode = v },
		"vectorTiles": func(v *yaml.Node) { vtNode = v },
	}, qn.handlers())) {
		return nil
	}
	vtRefs := l.vectorTiles(vtNode, ly)
	l.claim(ctx, n, idNode, nameNode, &ly.ID, ly.Name, "layer")
	l.scaleRange(minNode, ly.ScaleRange)
	if gtNode != nil {
		gt, err := feature.ParseGeometryType(l.str(gtNode, "geometryType"))
		if err != nil || gt == feature.None {
			l.errorf(resolve(gtNode), "geometryType %q: want point, multipoint, polyline or polygon", resolve(gtNode).Value)
		}
		ly.GeometryType = gt
	}
	if fieldsNode != nil {
		ly.Fields = l.fieldList(fieldsNode, &refs)
	}
	if dfNode != nil && ly.DisplayField != "" {
		refs = append(refs, fieldRef{ly.DisplayField, dfNode, "displayField"})
	}

	// The source decides the geometry type, which the renderer needs.
	tbl, lazy := l.source(srcNode, n, &ly.Source, "layer "+strconv.Quote(ly.Name))
	if lazy != nil && ly.GeometryType == feature.None {
		l.errorf(resolve(srcNode), "layer %q: a %s source needs geometryType (point, multipoint, polyline or polygon): the database is not read at load", ly.Name, lazy.Name())
	}
	if tbl != nil {
		switch {
		case !tbl.HasGeometry:
			l.errorf(resolve(srcNode), "table %q has no geometry column: use it as a standalone table (tables:)", tbl.Name)
		case ly.GeometryType == feature.None:
			ly.GeometryType = tbl.GeometryType
			if ly.GeometryType == feature.None {
				l.errorf(resolve(srcNode), "table %q has no single geometry type (%s): set geometryType", tbl.Name, tbl.GeometryTypeName)
			}
		case tbl.GeometryType != feature.None && tbl.GeometryType != ly.GeometryType:
			l.errorf(resolve(gtNode), "geometryType %s does not match the data (%s in table %q)",
				ly.GeometryType.Name(), tbl.GeometryTypeName, tbl.Name)
		}
		if ctx.srNode != nil && ctx.m.SpatialReference.WKID > 0 {
			if _, err := proj.Transform(tbl.SR, ctx.m.SpatialReference); err != nil {
				l.errorf(resolve(srcNode), "table %q is stored in %v and cannot be reprojected to the map's %v",
					tbl.Name, tbl.SR, ctx.m.SpatialReference)
			}
		}
	}

	if rendNode != nil {
		ly.Renderer = l.renderer(rendNode, ly.GeometryType, &refs)
	} else {
		ly.Renderer = symbology.DefaultRenderer(ly.GeometryType)
	}
	if labelsNode != nil {
		l.seq(labelsNode, "labels", func(it *yaml.Node) {
			if lb, ok := l.label(it, &refs); ok {
				ly.Labels = append(ly.Labels, lb)
			}
		})
	}
	ly.Queryable = l.queryable(qn, ly.Source, tbl)
	if tbl != nil {
		ctx.infos[ly.ID] = tbl
		ly.Fields, ly.DisplayField = l.resolveFields(tbl, ly.Fields, ly.DisplayField, refs)
		l.checkWhere(defNode, ly.DefinitionExpression, tbl)
		canonicalNames(tbl, ly)
		l.checkTileFields(ly, vtRefs)
	}
	return ly
}

func (l *loader) table(n *yaml.Node, ctx *mapCtx) *Table {
	t := &Table{}
	var idNode, nameNode, srcNode, fieldsNode, dfNode, defNode *yaml.Node
	var refs []fieldRef
	if !l.fields(n, "table", map[string]func(*yaml.Node){
		"id":           func(v *yaml.Node) { idNode = v; t.ID = l.int(v, "id") },
		"name":         func(v *yaml.Node) { nameNode = v; t.Name = l.str(v, "name") },
		"description":  func(v *yaml.Node) { t.Description = l.str(v, "description") },
		"source":       func(v *yaml.Node) { srcNode = v },
		"fields":       func(v *yaml.Node) { fieldsNode = v },
		"displayField": func(v *yaml.Node) { dfNode = v; t.DisplayField = l.str(v, "displayField") },
		"definitionExpression": func(v *yaml.Node) {
			defNode = v
			t.DefinitionExpression = l.str(v, "definitionExpression")
		},
	}) {
		return nil
	}
	l.claim(ctx, n, idNode, nameNode, &t.ID, t.Name, "table")
	if fieldsNode != nil {
		t.Fields = l.fieldList(fieldsNode, &refs)
	}
	if dfNode != nil && t.DisplayField != "" {
		refs = append(refs, fieldRef{t.DisplayField, dfNode, "displayField"})
	}
	if tbl, _ := l.source(srcNode, n, &t.Source, "table "+strconv.Quote(t.Name)); tbl != nil {
		ctx.infos[t.ID] = tbl
		t.Fields, t.DisplayField = l.resolveFields(tbl, t.Fields, t.DisplayField, refs)
		l.checkWhere(defNode, t.DefinitionExpression, tbl)
	}
	return t
}

// checkWhere parses a definition expression and checks it against the
// table's columns with the same where-clause compiler requests use.
func (l *loader) checkWhere(at *yaml.Node, clause string, t *provider.Schema) {
	if at == nil || strings.TrimSpace(clause) == "" {
		return
	}
	e, err := where.Parse(clause)
	if err == nil {
		_, err = e.Compile(whereSchema(t))
	}
	if err != nil {
		l.errorf(resolve(at), "definitionExpression: %v", err)
	}
}

// whereSchema describes a table's columns to the where-clause compiler.
func whereSchema(t *provider.Schema) where.Schema {
	var s where.Schema
	for _, f := range t.Fields {
		var wt where.FieldType
		switch f.Type {
		case feature.FieldOID, feature.FieldInteger, feature.FieldSmallInteger:
			wt = where.Integer
		case feature.FieldDouble, feature.FieldSingle:
			wt = where.Double
		case feature.FieldString:
			wt = where.String
		case feature.FieldDate:
			wt = where.Date
		default:
			continue
		}
		s = append(s, where.Field{Name: f.Name, Type: wt})
	}
	return s
}

// scaleRange checks that a non-zero range is not inverted.
func (l *loader) scaleRange(at *yaml.Node, r symbology.ScaleRange) {
	if r.MinScale != 0 && r.MaxScale != 0 && r.MinScale <= r.MaxScale {
		l.errorf(resolve(at), "inverted scale range: minScale (1:%g) must be a larger denominator than maxScale (1:%g); 0 means no limit",
			r.MinScale, r.MaxScale)
	}
}

// source decodes a source with the provider it names. It returns the
// schema of the source's table when the provider reads it at load, and
// the provider when the source is sound but its data is read only when it
// opens (nil, nil when anything is wrong).
func (l *loader) source(n, owner *yaml.Node, src *Source, what string) (*provider.Schema, provider.Provider) {
	if n == nil {
		l.errorf(owner, "%s: missing required key \"source\"", what)
		return nil, nil
	}
	keys := &sourceKeys{l: l, at: resolve(n), nodes: map[string]*yaml.Node{}, vals: map[string]string{}}
	handlers := map[string]func(*yaml.Node){}
	for _, k := range l.providers.Keys() {
		handlers[k] = func(v *yaml.Node) { keys.nodes[k] = v; keys.vals[k] = l.str(v, k) }
	}
	if !l.fields(n, "source", handlers) {
		return nil, nil
	}
	p, def, schema := l.providerSessions().Decode(keys)
	if def == nil {
		return nil, nil
	}
	*src = def
	if schema == nil {
		return nil, p
	}
	return schema, nil
}

// sourceKeys shows a source mapping to its provider.
type sourceKeys struct {
	l     *loader
	at    *yaml.Node
	nodes map[string]*yaml.Node
	vals  map[string]string
}

func (k *sourceKeys) Has(key string) bool { _, ok := k.nodes[key]; return ok }

func (k *sourceKeys) Written() []string {
	out := make([]string, 0, len(k.nodes))
	for key := range k.nodes {
		out = append(out, key)
	}
	return out
}

func (k *sourceKeys) String(key string) string { return k.vals[key] }

func (k *sourceKeys) Path(key string) string { return k.l.abs(k.vals[key]) }

func (k *sourceKeys) Errorf(key, format string, args ...any) {
	at := k.at
	if n, ok := k.nodes[key]; ok {
		at = resolve(n)
	}
	k.l.errorf(at, format, args...)
}

// abs resolves a path against the configuration file's directory.
func (l *loader) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.dir, p)
	}
	return filepath.Clean(p)
}

// fieldList decodes `fields:` items (name or {name, alias}).
func (l *loader) fieldList(n *yaml.Node, refs *[]fieldRef) []Field {
	var out []Field
	seen := map[string]*yaml.Node{}
	l.seq(n, "fields", func(it *yaml.Node) {
		var f Field
		at := resolve(it)
		if at.Kind == yaml.MappingNode {
			var nameNode *yaml.Node
			l.fields(it, "field", map[string]func(*yaml.Node){
				"name":  func(v *yaml.Node) { nameNode = v; f.Name = l.str(v, "field name") },
				"alias": func(v *yaml.Node) { f.Alias = l.str(v, "alias") },
			})
			if nameNode == nil {
				l.errorf(at, "field: missing required key \"name\"")
				return
			}
			at = resolve(nameNode)
		} else {
			f.Name = l.str(it, "field")
		}
		if f.Name == "" {
			l.errorf(at, "field name must not be empty")
			return
		}
		k := strings.ToLower(f.Name)
		if prev, dup := seen[k]; dup {
			l.errorf(at, "field %q listed twice (first at line %d)", f.Name, prev.Line)
			return
		}
		seen[k] = at
		*refs = append(*refs, fieldRef{f.Name, at, "field"})
		out = append(out, f)
	})
	if out == nil {
		out = []Field{}
	}
	return out
}

// resolveFields checks every field reference against the table, fixes the
// names' case to the table's, and fills the defaults for fields (all
// columns) and the display field.
func (l *loader) resolveFields(t *provider.Schema, fields []Field, display string, refs []fieldRef) ([]Field, string) {
	for _, r := range refs {
		if _, ok := t.Field(r.name); !ok {
			l.errorf(resolve(r.at), "%s %q is not a column of table %q (columns: %s)", r.what, r.name, t.Name, columnList(t))
		}
	}
	if fields == nil {
		for _, f := range t.Fields {
			fields = append(fields, Field{Name: f.Name, Alias: f.Name})
		}
	}
	for i := range fields {
		if tf, ok := t.Field(fields[i].Name); ok {
			fields[i].Name = tf.Name
		}
		if fields[i].Alias == "" {
			fields[i].Alias = fields[i].Name
		}
	}
	if display != "" {
		if tf, ok := t.Field(display); ok {
			display = tf.Name
		}
		return fields, display
	}
	for _, f := range fields {
		if tf, ok := t.Field(f.Name); ok && tf.Type == feature.FieldString {
			return fields, tf.Name
		}
	}
	for _, f := range fields {
		if tf, ok := t.Field(f.Name); ok && tf.Type != feature.FieldOID {
			return fields, tf.Name
		}
	}
	return fields, t.OIDField
}

// canonicalNames rewrites the field names a layer's renderer and labels use
// to the table's spelling, so consumers can match them exactly.
func canonicalNames(t *provider.Schema, ly *Layer) {
	canon := func(s *string) {
		if f, ok := t.Field(*s); ok {
			*s = f.Name
		}
	}
	for i := range ly.Renderer.Fields {
		canon(&ly.Renderer.Fields[i])
	}
	canon(&ly.Renderer.Field)
	for i := range ly.Labels {
		lb := &ly.Labels[i]
		canon(&lb.Field)
		for j := range lb.Text {
			if lb.Text[j].Field != "" {
				canon(&lb.Text[j].Field)
			}
		}
	}
}

func columnList(t *provider.Schema) string {
	names := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// merge returns a with b's entries added.
func merge(a, b map[string]func(*yaml.Node)) map[string]func(*yaml.Node) {
	for k, v := range b {
		a[k] = v
	}
	return a
}
