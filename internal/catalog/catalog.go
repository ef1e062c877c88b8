// Package catalog turns a validated service definition into services that
// are ready to serve: every layer's and table's data source opened by its
// provider (package provider: a GeoPackage or PostGIS table read on
// demand, a small GeoJSON file in memory), seen in
// its map's spatial reference, and the published fields resolved against
// the source's columns. Opening reads metadata only: start-up time and
// memory do not grow with the data.
//
// A Catalog is built once at startup by Open and is read-only afterwards,
// so every request can use it concurrently without locks; Close releases
// the open files. Lookups follow
// ArcGIS: service names are case-insensitive, an empty map name means the
// default (first) map, layers and tables are addressed by ID.
package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// Catalog holds the loaded services.
type Catalog struct {
	services []*Service
	sources  []feature.Source   // each opened source once, for Ping
	sessions *provider.Sessions // the providers' files and pools
	systems  *proj.Systems
}

// Service is one loaded MapServer service.
type Service struct {
	// Def is the service's definition.
	Def *servicedef.Service
	// Name is the service name as written in the definition.
	Name string
	// Maps are the service's maps; Maps[0] is the default map.
	Maps []*Map
}

// Map is one loaded map (data frame).
type Map struct {
	// Def is the map's definition.
	Def *servicedef.Map
	// Name is the map name.
	Name string
	// SR is the map's spatial reference; every layer's geometries are in it.
	SR proj.SR
	// Systems describes and transforms spatial references, for answers in another system than
	// SR (the catalog's, shared by its maps).
	Systems *proj.Systems
	// FullExtent is the union of the layers' extents.
	FullExtent orb.Bound
	// InitialExtent is the definition's initialExtent, or FullExtent.
	InitialExtent orb.Bound
	// Layers are in definition order (layer 0 draws on top).
	Layers []*Layer
	// Tables are the standalone tables.
	Tables []*Table
}

// Layer is one loaded feature layer.
type Layer struct {
	// Def is the layer's definition (renderer, labels, visibility, …).
	Def *servicedef.Layer
	// ID is the layer ID.
	ID int
	// Name is the layer name.
	Name string
	// Data is where the features come from, in the map's SR. Layers of the
	// same map (or of different services) reading the same table share it.
	Data feature.Source
	// Fields are the published fields, in definition order, with aliases;
	// the object-ID field is always first.
	Fields []feature.Field
	// FieldIndex[i] is the position of Fields[i] in Data.Info().Fields (and
	// so in Feature.Values).
	FieldIndex []int
	// Extent is the extent of the layer's features.
	Extent orb.Bound
	// DisplayField is the name of the display field.
	DisplayField string
	// IDField is the name of the object-ID field ("" if the table has none).
	IDField string
	// MinScale and MaxScale are the layer's scale range (ArcGIS semantics,
	// 0 = no limit).
	MinScale, MaxScale float64
	// Attachments is the layer's attachments table (`<table>__ATTACH`, see
	// servicedef.Queryable), attributes only; nil when the layer has none.
	Attachments feature.Source
	// Overview holds the footprints of Data's polygons for drawings whose
	// pixels are larger than any of them (feature.Overview); nil when Data
	// cannot have one (not polygons, reprojected, a source that cannot tell
	// its version). Layers reading the same table share it.
	Overview *feature.Overview
}

// Table is one loaded standalone table.
type Table struct {
	// Def is the table's definition.
	Def *servicedef.Table
	// ID is the table ID (unique among the map's layers and tables).
	ID int
	// Name is the table name.
	Name string
	// Data is where the rows come from (no geometry).
	Data feature.Source
	// Fields, FieldIndex, DisplayField and IDField are as for Layer.
	Fields       []feature.Field
	FieldIndex   []int
	DisplayField string
	IDField      string
}

// Open opens every service of cfg, each source through its provider of
// providers (the registry cfg was loaded with). Each GeoPackage is opened
// once and stays open, read-only, until Close; a GeoJSON file is read into
// memory; a PostGIS connection is one pool.
func Open(ctx context.Context, cfg *servicedef.Config, providers *provider.Registry) (*Catalog, error) {
	systems := proj.NewSystems(0)
	ld := &loader{ctx: ctx, systems: systems, sessions: providers.NewSessions(provider.Env{Connections: cfg.Connections}),
		sources: map[provider.Definition]feature.Source{}, overviews: map[provider.Definition]*feature.Overview{}, overviewBudget: feature.NewOverviewBudget(0)}
	c := &Catalog{systems: systems, sessions: ld.sessions}
	for _, sd := range cfg.Services {
		s := &Service{Def: sd, Name: sd.Name}
		for _, md := range sd.Maps {
			m, err := ld.loadMap(md)
			if err != nil {
				ld.sessions.Close()
				return nil, fmt.Errorf("catalog: service %s: %w", sd.Name, err)
			}
			s.Maps = append(s.Maps, m)
		}
		c.services = append(c.services, s)
	}
	for _, src := range ld.sources {
		c.sources = append(c.sources, src)
	}
	return c, nil
}

// Close releases the open files and database connections.
func (c *Catalog) Close() error {
	if c.sessions == nil {
		return nil
	}
	err := c.sessions.Close()
	c.services, c.sources, c.sessions = nil, nil, nil
	return err
}

// Ping checks that every data source answers; /readyz reports the first
// that does not.
func (c *Catalog) Ping(ctx context.Context) error {
	for _, src := range c.sources {
		if err := src.Ping(ctx); err != nil {
			return fmt.Errorf("%s: %w", src.Info().Name, err)
		}
	}
	return nil
}

// Systems describes spatial references and transforms between them (PROJ in a build with the
// proj tag), keeping the recently used transformers: what every operation that reprojects
// (a map drawn in another system, a query's output geometry) asks.
func (c *Catalog) Systems() *proj.Systems { return c.systems }

// Services returns the services in definition order.
func (c *Catalog) Services() []*Service { return c.services }

// Service returns the named service, case-insensitively as ArcGIS does.
func (c *Catalog) Service(name string) (*Service, bool) {
	for _, s := range c.services {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return nil, false
}

// DefaultMap returns the first map.
func (s *Service) DefaultMap() *Map { return s.Maps[0] }

// Map returns the named map (case-insensitive); "" is the default map.
func (s *Service) Map(name string) (*Map, bool) {
	if name == "" {
		return s.DefaultMap(), true
	}
	for _, m := range s.Maps {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	return nil, false
}

// Layer returns the layer with the given ID.
func (m *Map) Layer(id int) (*Layer, bool) {
	for _, l := range m.Layers {
		if l.ID == id {
			return l, true
		}
	}
	return nil, false
}

// Table returns the standalone table with the given ID.
func (m *Map) Table(id int) (*Table, bool) {
	for _, t := range m.Tables {
		if t.ID == id {
			return t, true
		}
	}
	return nil, false
}

type loader struct {
	ctx      context.Context
	sessions *provider.Sessions
	sources  map[provider.Definition]feature.Source // as stored, in their own SR
	// overviews are the sources' overviews, one for every layer that reads a table as stored
	overviews map[provider.Definition]*feature.Overview
	// overviewBudget bounds the memory of all the overviews together
	// (feature.DefaultOverviewBytes).
	overviewBudget *feature.OverviewBudget
	systems        *proj.Systems
}

// read opens a table (once for every layer that reads it) and returns it in
// the SR sr, or as attributes only when sr is the zero SR.
func (ld *loader) read(src servicedef.Source, sr proj.SR) (feature.Source, error) {
	s, ok := ld.sources[src]
	if !ok {
		var err error
		if s, err = ld.sessions.Open(ld.ctx, src); err != nil {
			return nil, err
		}
		ld.sources[src] = s
	}
	if sr.WKID == 0 {
		return feature.Attributes(s), nil
	}
	return feature.Reprojected(s, sr, ld.systems)
}

// overview returns the Overview of the table src reads (one for every layer that reads it)
// when data is that table as stored; nil otherwise.
func (ld *loader) overview(src servicedef.Source, data feature.Source) *feature.Overview {
	if s, ok := ld.sources[src]; !ok || s != data {
		return nil
	}
	ov, ok := ld.overviews[src]
	if !ok {
		ov = feature.NewOverview(data, ld.overviewBudget)
		ld.overviews[src] = ov
	}
	return ov
}

func (ld *loader) loadMap(md *servicedef.Map) (*Map, error) {
	m := &Map{Def: md, Name: md.Name, SR: ld.systems.Described(md.SpatialReference), FullExtent: feature.EmptyBound(), Systems: ld.systems}
	for _, d := range md.Layers {
		data, err := ld.read(d.Source, md.SpatialReference)
		if err != nil {
			return nil, fmt.Errorf("map %s layer %d (%s): %w", md.Name, d.ID, d.Name, err)
		}
		fields, idx, idField, err := publish(data, d.Fields)
		if err != nil {
			return nil, fmt.Errorf("map %s layer %d (%s): %w", md.Name, d.ID, d.Name, err)
		}
		l := &Layer{
			Def: d, ID: d.ID, Name: d.Name, Data: data,
			Fields: fields, FieldIndex: idx, Extent: data.Info().Extent,
			DisplayField: d.DisplayField, IDField: idField,
			MinScale: d.MinScale, MaxScale: d.MaxScale,
		}
		l.Overview = ld.overview(d.Source, data)
		if d.Attachments {
			// the attachments table sits beside the layer's own
			a, ok := d.Source.(provider.Attacher)
			if !ok {
				return nil, fmt.Errorf("map %s layer %d (%s): a %s source has no attachments", md.Name, d.ID, d.Name, d.Source.Provider())
			}
			src := a.Attachments(servicedef.AttachmentTable(d.Source.TableName()))
			if l.Attachments, err = ld.read(src, proj.SR{}); err != nil {
				return nil, fmt.Errorf("map %s layer %d (%s) attachments: %w", md.Name, d.ID, d.Name, err)
			}
		}
		m.FullExtent = m.FullExtent.Union(l.Extent)
		m.Layers = append(m.Layers, l)
	}
	for _, d := range md.Tables {
		data, err := ld.read(d.Source, proj.SR{})
		if err != nil {
			return nil, fmt.Errorf("map %s table %d (%s): %w", md.Name, d.ID, d.Name, err)
		}
		fields, idx, idField, err := publish(data, d.Fields)
		if err != nil {
			return nil, fmt.Errorf("map %s table %d (%s): %w", md.Name, d.ID, d.Name, err)
		}
		m.Tables = append(m.Tables, &Table{
			Def: d, ID: d.ID, Name: d.Name, Data: data,
			Fields: fields, FieldIndex: idx, DisplayField: d.DisplayField, IDField: idField,
		})
	}
	m.InitialExtent = m.FullExtent
	if md.InitialExtent != nil {
		m.InitialExtent = *md.InitialExtent
	}
	return m, nil
}

// publish resolves the definition's field list against the data: the OID
// field first (always published), then the listed fields in order with
// their aliases. A nil list publishes every field.
func publish(data feature.Source, defs []servicedef.Field) ([]feature.Field, []int, string, error) {
	info := data.Info()
	all := info.Fields
	var (
		fields  []feature.Field
		idx     []int
		idField string
	)
	for i, f := range all {
		if f.Type == feature.FieldOID {
			idField = f.Name
			fields = append(fields, f)
			idx = append(idx, i)
			break
		}
	}
	if defs == nil {
		for i, f := range all {
			if f.Name != idField {
				fields = append(fields, f)
				idx = append(idx, i)
			}
		}
		return fields, idx, idField, nil
	}
	for _, d := range defs {
		i := info.FieldIndex(d.Name)
		if i < 0 {
			return nil, nil, "", fmt.Errorf("field %q is not in table %s", d.Name, info.Table)
		}
		f := all[i]
		if d.Alias != "" {
			f.Alias = d.Alias
		}
		if f.Name == idField {
			fields[0].Alias = f.Alias
			continue
		}
		fields = append(fields, f)
		idx = append(idx, i)
	}
	return fields, idx, idField, nil
}
