package queries

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/where"
)

// QueryRelatedRecords follows a relationship declared in the service definition from the rows
// of SourceFIDSet to the related rows: one group per source row (in FIDSet order) with the
// related records. The relationship is followed from either end. RelateDescription's
// RelatedTableDefinitionExpression, RelatedTableFields (like SubFields), IncludeGeometry and
// OutputSpatialReference shape the records; ResultFormat is the RelatedRecordSet as Object, or
// Esri JSON as MIME data.
func (s *Service) QueryRelatedRecords(ctx context.Context, c *operation.Call, req *gisxml.QueryRelatedRecords) (*gisxml.QueryRelatedRecordsResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	src, _, err := sourceByID(m, req.SourceTableID)
	if err != nil {
		return nil, err
	}
	res, err := s.related(ctx, m, src, "", req.SourceFIDSet, req.RelateDescription, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRelatedRecordsResponse{Result: res}, nil
}

// QueryRelatedRecords2 is QueryRelatedRecords with the source from a MapTableDescription, whose
// definition expression limits the source rows.
func (s *Service) QueryRelatedRecords2(ctx context.Context, c *operation.Call, req *gisxml.QueryRelatedRecords2) (*gisxml.QueryRelatedRecords2Response, error) {
	m, src, _, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	res, err := s.related(ctx, m, src, defExpr, req.SourceFIDSet, req.RelateDescription, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRelatedRecords2Response{Result: res}, nil
}

// relationship finds a relationship of the map by ID that src takes part in, and says which
// end src is.
func relationship(m *catalog.Map, src *source, id int) (*servicedef.Relationship, bool, error) {
	for _, r := range m.Def.Relationships {
		if r.ID != id {
			continue
		}
		switch src.id {
		case r.Origin:
			return r, true, nil
		case r.Destination:
			return r, false, nil
		}
		return nil, false, operation.Invalid("relationship %d (%s) does not involve %s %d", id, r.Name, src.kind, src.id)
	}
	return nil, false, operation.NotFound("map %s has no relationship %d", m.Name, id)
}

// relatedKeysPerQuery is how many key values one destination query of related records asks for.
const relatedKeysPerQuery = 1000

func (s *Service) related(ctx context.Context, m *catalog.Map, src *source, srcDefExpr string, fids *gisxml.FIDSet, rd *gisxml.RelateDescription, publish publishFunc) (*gisxml.QueryResult, error) {
	if rd == nil {
		return nil, operation.Invalid("RelateDescription is required")
	}
	if fids == nil {
		return nil, operation.Invalid("SourceFIDSet is required")
	}
	rel, fromOrigin, err := relationship(m, src, rd.RelationshipID)
	if err != nil {
		return nil, err
	}
	srcKey, dstID, dstKey := rel.OriginKey, rel.Destination, rel.DestinationKey
	if !fromOrigin {
		srcKey, dstID, dstKey = rel.DestinationKey, rel.Origin, rel.OriginKey
	}
	dst, _, err := sourceByID(m, dstID)
	if err != nil {
		return nil, err
	}
	filter := &gisxml.QueryFilter{SubFields: rd.RelatedTableFields, OutputSpatialReference: rd.OutputSpatialReference}
	if rd.RelatedTableDefinitionExpression != nil {
		filter.WhereClause = *rd.RelatedTableDefinitionExpression
	}
	p, err := newPlan(ctx, dst, filter, "")
	if err != nil {
		return nil, fmt.Errorf("RelateDescription: %w", err)
	}
	if rd.IncludeGeometry != nil && !*rd.IncludeGeometry {
		p.shape = false
	}
	srcPlan, err := newPlan(ctx, src, nil, srcDefExpr)
	if err != nil {
		return nil, err
	}
	// The source rows asked for, then the destination rows of their keys, indexed by key in id
	// order: only the related rows are read, a chunk of keys at a time.
	sk := src.info.FieldIndex(srcKey)
	srcRows, err := srcPlan.byID(fids.FIDArray, []int{sk})
	if err != nil {
		return nil, err
	}
	var keys []any
	seen := map[string]bool{}
	for _, f := range srcRows {
		if v := f.Values[sk]; v != nil && !seen[keyOf(v)] {
			seen[keyOf(v)] = true
			keys = append(keys, v)
		}
	}
	dk := dst.info.FieldIndex(dstKey)
	byKey := map[string][]*feature.Feature{}
	for chunk := range slices.Chunk(keys, relatedKeysPerQuery) {
		in, err := where.In(dst.info.Fields[dk].Name, chunk)
		if err != nil {
			return nil, err
		}
		cp := *p
		cp.where = where.And(p.where, in)
		feats, err := cp.collect()
		if err != nil {
			return nil, err
		}
		for _, f := range feats {
			if v := f.Values[dk]; v != nil {
				k := keyOf(v)
				byKey[k] = append(byKey[k], f)
			}
		}
	}
	set := &gisxml.RelatedRecordSet{RelatedRecordGroups: gisxml.ArrayOfRelatedRecordGroup{}}
	var groups [][]*feature.Feature
	total, limit := 0, s.maxRecords()
	for _, id := range fids.FIDArray {
		f, ok := srcRows[int64(id)]
		if !ok {
			continue
		}
		var rows []*feature.Feature
		if v := f.Values[sk]; v != nil {
			rows = byKey[keyOf(v)]
		}
		if rel.Cardinality == "oneToOne" && len(rows) > 1 {
			rows = rows[:1]
		}
		if total+len(rows) > limit {
			rows = rows[:limit-total]
		}
		total += len(rows)
		groups = append(groups, rows)
		rs := p.recordSet(rows)
		set.RelatedRecordFields = rs.Fields
		set.RelatedRecordGroups = append(set.RelatedRecordGroups, &gisxml.RelatedRecordGroup{SourceRowID: id, Records: rs.Records})
	}
	if set.RelatedRecordFields == nil {
		set.RelatedRecordFields = p.recordSet(nil).Fields
	}
	switch rd.ResultFormat {
	case "", gisxml.RelateResultRelatedRecordSetAsObject:
		return &gisxml.QueryResult{Object: set}, nil
	case gisxml.RelateResultJsonAsMime, gisxml.RelateResultJsonAsURL:
		type group struct {
			ObjectID       int               `json:"objectId"`
			RelatedRecords []json.RawMessage `json:"relatedRecords"`
		}
		doc := struct {
			Groups []group `json:"relatedRecordGroups"`
		}{Groups: []group{}}
		for i, g := range set.RelatedRecordGroups {
			data, err := esriJSON(p, groups[i], false)
			if err != nil {
				return nil, err
			}
			var fs struct {
				Features []json.RawMessage `json:"features"`
			}
			if err := json.Unmarshal(data, &fs); err != nil {
				return nil, err
			}
			doc.Groups = append(doc.Groups, group{ObjectID: g.SourceRowID, RelatedRecords: fs.Features})
		}
		data, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		if rd.ResultFormat == gisxml.RelateResultJsonAsURL {
			url, err := publish(data, "application/json")
			if err != nil {
				return nil, err
			}
			return &gisxml.QueryResult{URL: url}, nil
		}
		return &gisxml.QueryResult{MimeData: data}, nil
	}
	return nil, operation.Invalid("RelateDescription/ResultFormat %s is not supported: use gisRelateResultRelatedRecordSetAsObject, gisRelateResultJsonAsMime or gisRelateResultJsonAsURL", rd.ResultFormat)
}

// keyOf is a relationship key value as a map key: numbers by value, so 6 and 6.0 match.
func keyOf(v any) string {
	switch x := v.(type) {
	case int64:
		return fmt.Sprintf("n%d", x)
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprintf("n%d", int64(x))
		}
		return fmt.Sprintf("n%g", x)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// RelateInfos describes the relationships a layer or table takes part in, for GetServerInfo.
func RelateInfos(m *catalog.Map, id int) gisxml.ArrayOfRelateInfo {
	out := gisxml.ArrayOfRelateInfo{}
	for _, r := range m.Def.Relationships {
		card := gisxml.RelCardinalityOneToMany
		if r.Cardinality == "oneToOne" {
			card = gisxml.RelCardinalityOneToOne
		}
		switch id {
		case r.Origin:
			out = append(out, &gisxml.RelateInfo{Name: r.Name, RelationshipID: r.ID, RelatedTableID: r.Destination,
				Role: operation.Ptr(gisxml.RelRoleOrigin), Cardinality: operation.Ptr(card), KeyField: operation.Ptr(r.OriginKey), IsComposite: operation.Ptr(false)})
		case r.Destination:
			out = append(out, &gisxml.RelateInfo{Name: r.Name, RelationshipID: r.ID, RelatedTableID: r.Origin,
				Role: operation.Ptr(gisxml.RelRoleDestination), Cardinality: operation.Ptr(card), KeyField: operation.Ptr(r.DestinationKey), IsComposite: operation.Ptr(false)})
		}
	}
	return out
}
