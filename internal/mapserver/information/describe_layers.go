package information

import (
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/mapserver/queries"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func shapeDef(l *catalog.Layer, sr proj.SR) *gisxml.GeometryDef {
	avg := l.Data.Info().AvgPoints
	return &gisxml.GeometryDef{AvgNumPoints: avg, GeometryType: operation.GeometryType(l.Data.Info().GeometryType), SpatialReference: operation.SpatialReference(sr)}
}

func layerInfo(m *catalog.Map, l *catalog.Layer) *gisxml.MapLayerInfo {
	aliases := make(gisxml.ArrayOfString, 0, len(l.Fields)+1)
	for _, f := range l.Fields {
		aliases = append(aliases, f.Alias)
	}
	aliases = append(aliases, "Shape")
	d := l.Def
	fs := operation.Fields(l.Fields, shapeDef(l, m.SR))
	queries.MarkRaster(fs, d.RasterField)
	return &gisxml.MapLayerInfo{
		LayerID: l.ID, Name: l.Name, Description: d.Description,
		LayerType: "Feature Layer", SourceDescription: "GeoPackage Feature Class",
		HasLabels: len(d.Labels) > 0, CanSelect: true, CanScaleSymbols: operation.CanScaleSymbols(m),
		MinScale: l.MinScale, MaxScale: l.MaxScale, Extent: operation.Envelope(l.Extent, m.SR),
		HasHyperlinks: d.HyperlinkField != "", HasAttributes: true, CanIdentify: true, CanFind: true, IsFeatureLayer: true,
		Fields: fs, DisplayField: l.DisplayField, IDField: l.IDField,
		IsComposite: false, ParentLayerID: -1, FieldAliases: aliases, CopyrightText: d.CopyrightText,
		RelateInfos: queries.RelateInfos(m, l.ID), SupportsTime: operation.Ptr(false), HasAttachments: operation.Ptr(l.Attachments != nil),
		HTMLPopupType:              operation.Ptr(queries.PopupType(l)),
		HasLayerDrawingDescription: operation.Ptr(true), HasSubtype: operation.Ptr(d.Subtypes != nil), CanModifyDrawingDescription: operation.Ptr(true),
		SupportsStatistics: operation.Ptr(true), SupportsAdvancedQueries: operation.Ptr(true), HasLiveData: operation.Ptr(false),
	}
}

func tableInfo(m *catalog.Map, t *catalog.Table) *gisxml.StandaloneTableInfo {
	return &gisxml.StandaloneTableInfo{
		ID: t.ID, Name: t.Name, Fields: operation.Fields(t.Fields, nil), RelateInfos: queries.RelateInfos(m, t.ID),
		SupportsTime: operation.Ptr(false), HasAttachments: operation.Ptr(false), DisplayField: operation.Ptr(t.DisplayField),
		Description: operation.Ptr(t.Def.Description), IDField: operation.Ptr(t.IDField), HasSubtype: operation.Ptr(false),
		SupportsStatistics: operation.Ptr(true), SupportsAdvancedQueries: operation.Ptr(true),
	}
}

// layerDescription is a layer's state in the default map description.
func layerDescription(m *catalog.Map, l *catalog.Layer) *gisxml.LayerDescription {
	return &gisxml.LayerDescription{
		LayerID: l.ID, Visible: l.Def.Visible, ShowLabels: len(l.Def.Labels) > 0, ScaleSymbols: operation.ScaleSymbolsDefault(m, l),
		SelectionColor: &gisxml.RgbColor{Red: 0, Green: 255, Blue: 255}, SetSelectionSymbol: false,
		SelectionBufferDistance: 0, ShowSelectionBuffer: false, DefinitionExpression: l.Def.DefinitionExpression,
		SourceID:           operation.Ptr(""),
		LayerResultOptions: &gisxml.LayerResultOptions{IncludeGeometry: operation.Ptr(true), ReturnFieldNamesInResults: operation.Ptr(false), FormatValuesInResults: operation.Ptr(true)},
		UseTime:            operation.Ptr(false), TimeDataCumulative: operation.Ptr(false), TimeOffset: operation.Ptr(0.0), TimeOffsetUnits: operation.Ptr(gisxml.TimeUnitsYears),
	}
}

func defaultMapDescription(m *catalog.Map) *gisxml.MapDescription {
	lds := make(gisxml.ArrayOfLayerDescription, 0, len(m.Layers))
	for _, l := range m.Layers {
		lds = append(lds, layerDescription(m, l))
	}
	bg := m.Def.BackgroundColor
	return &gisxml.MapDescription{
		Name:              m.Name,
		MapArea:           &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: operation.Envelope(m.InitialExtent, m.SR)}},
		LayerDescriptions: lds,
		Rotation:          0,
		SpatialReference:  operation.SpatialReference(m.SR),
		SelectionColor:    &gisxml.RgbColor{Red: 0, Green: 255, Blue: 255},
		BackgroundSymbol: &gisxml.SimpleFillSymbol{
			FillSymbolFields: gisxml.FillSymbolFields{Color: operation.RGB(bg)},
			Style:            gisxml.SFSSolid,
		},
		HonorLayerReordering: operation.Ptr(false),
	}
}

func propertySet(kv ...any) *gisxml.PropertySet {
	ps := &gisxml.PropertySet{}
	for i := 0; i+1 < len(kv); i += 2 {
		ps.PropertyArray = append(ps.PropertyArray, &gisxml.PropertySetProperty{Key: kv[i].(string), Value: kv[i+1]})
	}
	return ps
}
