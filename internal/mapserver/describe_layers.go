package mapserver

import (
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func shapeDef(l *catalog.Layer, sr proj.SR) *gisxml.GeometryDef {
	avg := l.Data.Info().AvgPoints
	return &gisxml.GeometryDef{AvgNumPoints: avg, GeometryType: geometryType(l.Data.Info().GeometryType), SpatialReference: spatialReference(sr)}
}

func layerInfo(m *catalog.Map, l *catalog.Layer) *gisxml.MapLayerInfo {
	aliases := make(gisxml.ArrayOfString, 0, len(l.Fields)+1)
	for _, f := range l.Fields {
		aliases = append(aliases, f.Alias)
	}
	aliases = append(aliases, "Shape")
	d := l.Def
	fs := fields(l.Fields, shapeDef(l, m.SR))
	markRaster(fs, d.RasterField)
	return &gisxml.MapLayerInfo{
		LayerID: l.ID, Name: l.Name, Description: d.Description,
		LayerType: "Feature Layer", SourceDescription: "GeoPackage Feature Class",
		HasLabels: len(d.Labels) > 0, CanSelect: true, CanScaleSymbols: canScaleSymbols(m),
		MinScale: l.MinScale, MaxScale: l.MaxScale, Extent: envelope(l.Extent, m.SR),
		HasHyperlinks: d.HyperlinkField != "", HasAttributes: true, CanIdentify: true, CanFind: true, IsFeatureLayer: true,
		Fields: fs, DisplayField: l.DisplayField, IDField: l.IDField,
		IsComposite: false, ParentLayerID: -1, FieldAliases: aliases, CopyrightText: d.CopyrightText,
		RelateInfos: relateInfos(m, l.ID), SupportsTime: ptr(false), HasAttachments: ptr(l.Attachments != nil),
		HTMLPopupType:              ptr(popupType(l)),
		HasLayerDrawingDescription: ptr(true), HasSubtype: ptr(d.Subtypes != nil), CanModifyDrawingDescription: ptr(true),
		SupportsStatistics: ptr(true), SupportsAdvancedQueries: ptr(true), HasLiveData: ptr(false),
	}
}

func tableInfo(m *catalog.Map, t *catalog.Table) *gisxml.StandaloneTableInfo {
	return &gisxml.StandaloneTableInfo{
		ID: t.ID, Name: t.Name, Fields: fields(t.Fields, nil), RelateInfos: relateInfos(m, t.ID),
		SupportsTime: ptr(false), HasAttachments: ptr(false), DisplayField: ptr(t.DisplayField),
		Description: ptr(t.Def.Description), IDField: ptr(t.IDField), HasSubtype: ptr(false),
		SupportsStatistics: ptr(true), SupportsAdvancedQueries: ptr(true),
	}
}

// layerDescription is a layer's state in the default map description.
func layerDescription(m *catalog.Map, l *catalog.Layer) *gisxml.LayerDescription {
	return &gisxml.LayerDescription{
		LayerID: l.ID, Visible: l.Def.Visible, ShowLabels: len(l.Def.Labels) > 0, ScaleSymbols: scaleSymbolsDefault(m, l),
		SelectionColor: &gisxml.RgbColor{Red: 0, Green: 255, Blue: 255}, SetSelectionSymbol: false,
		SelectionBufferDistance: 0, ShowSelectionBuffer: false, DefinitionExpression: l.Def.DefinitionExpression,
		SourceID:           ptr(""),
		LayerResultOptions: &gisxml.LayerResultOptions{IncludeGeometry: ptr(true), ReturnFieldNamesInResults: ptr(false), FormatValuesInResults: ptr(true)},
		UseTime:            ptr(false), TimeDataCumulative: ptr(false), TimeOffset: ptr(0.0), TimeOffsetUnits: ptr(gisxml.TimeUnitsYears),
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
		MapArea:           &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: envelope(m.InitialExtent, m.SR)}},
		LayerDescriptions: lds,
		Rotation:          0,
		SpatialReference:  spatialReference(m.SR),
		SelectionColor:    &gisxml.RgbColor{Red: 0, Green: 255, Blue: 255},
		BackgroundSymbol: &gisxml.SimpleFillSymbol{
			FillSymbolFields: gisxml.FillSymbolFields{Color: rgb(bg)},
			Style:            gisxml.SFSSolid,
		},
		HonorLayerReordering: ptr(false),
	}
}

func propertySet(kv ...any) *gisxml.PropertySet {
	ps := &gisxml.PropertySet{}
	for i := 0; i+1 < len(kv); i += 2 {
		ps.PropertyArray = append(ps.PropertyArray, &gisxml.PropertySetProperty{Key: kv[i].(string), Value: kv[i+1]})
	}
	return ps
}
