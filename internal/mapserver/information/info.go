package information

import (
	"context"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// GetDocumentInfo returns the map document's properties as string properties.
func (s *Service) GetDocumentInfo(ctx context.Context, c *operation.Call, _ *gisxml.GetDocumentInfo) (*gisxml.GetDocumentInfoResponse, error) {
	d := c.Service.Def.DocumentInfo
	return &gisxml.GetDocumentInfoResponse{Result: propertySet(
		"Title", d.Title, "Subject", d.Subject, "Author", d.Author, "Category", d.Category,
		"Keywords", d.Keywords, "Comments", d.Comments,
		"AntialiasingMode", "Normal", "TextAntialiasingMode", "Force",
	)}, nil
}

// GetMapCount returns the number of maps in the service.
func (s *Service) GetMapCount(ctx context.Context, c *operation.Call, _ *gisxml.GetMapCount) (*gisxml.GetMapCountResponse, error) {
	return &gisxml.GetMapCountResponse{Result: len(c.Service.Maps)}, nil
}

// GetMapName returns the name of the map at an index (from 0).
func (s *Service) GetMapName(ctx context.Context, c *operation.Call, req *gisxml.GetMapName) (*gisxml.GetMapNameResponse, error) {
	if req.Index < 0 || req.Index >= len(c.Service.Maps) {
		return nil, operation.Invalid("Index %d is out of range: the service has %d map(s), indexed from 0", req.Index, len(c.Service.Maps))
	}
	return &gisxml.GetMapNameResponse{Result: c.Service.Maps[req.Index].Name}, nil
}

// GetDefaultMapName returns the name of the first map.
func (s *Service) GetDefaultMapName(ctx context.Context, c *operation.Call, _ *gisxml.GetDefaultMapName) (*gisxml.GetDefaultMapNameResponse, error) {
	return &gisxml.GetDefaultMapNameResponse{Result: c.Service.DefaultMap().Name}, nil
}

// GetServerInfo describes one map: extents, spatial reference, layers and tables with their
// fields, and the default map description.
func (s *Service) GetServerInfo(ctx context.Context, c *operation.Call, req *gisxml.GetServerInfo) (*gisxml.GetServerInfoResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	infos := make(gisxml.ArrayOfMapLayerInfo, 0, len(m.Layers))
	for _, l := range m.Layers {
		infos = append(infos, layerInfo(m, l))
	}
	tables := make(gisxml.ArrayOfStandaloneTableInfo, 0, len(m.Tables))
	tdescs := make(gisxml.ArrayOfStandaloneTableDescription, 0, len(m.Tables))
	for _, t := range m.Tables {
		tables = append(tables, tableInfo(m, t))
		tdescs = append(tdescs, &gisxml.StandaloneTableDescription{ID: t.ID, DefinitionExpression: operation.Ptr(t.Def.DefinitionExpression), SourceID: operation.Ptr("")})
	}
	bg := m.Def.BackgroundColor
	desc := m.Def.Description
	if desc == "" {
		desc = c.Service.Def.Description
	}
	copyright := m.Def.CopyrightText
	if copyright == "" {
		copyright = c.Service.Def.CopyrightText
	}
	var minScale, maxScale float64
	for i, l := range m.Layers {
		if i == 0 || l.MinScale == 0 || (minScale != 0 && l.MinScale > minScale) {
			minScale = l.MinScale
		}
		if i == 0 || l.MaxScale < maxScale {
			maxScale = l.MaxScale
		}
	}
	return &gisxml.GetServerInfoResponse{Result: &gisxml.MapServerInfo{
		Name:                        m.Name,
		Description:                 desc,
		FullExtent:                  operation.Envelope(m.FullExtent, m.SR),
		Extent:                      operation.Envelope(m.InitialExtent, m.SR),
		SpatialReference:            operation.SpatialReference(m.SR),
		MapLayerInfos:               infos,
		BackgroundColor:             operation.RGB(bg),
		Bookmarks:                   gisxml.ArrayOfMapServerBookmark{},
		DefaultMapDescription:       defaultMapDescription(m),
		Units:                       operation.Units(m.SR),
		SupportedImageReturnTypes:   gisxml.ImageReturnURL,
		BackgroundSymbol:            &gisxml.SimpleFillSymbol{FillSymbolFields: gisxml.FillSymbolFields{Color: operation.RGB(bg)}, Style: gisxml.SFSSolid},
		CopyrightText:               copyright,
		StandaloneTableInfos:        tables,
		StandaloneTableDescriptions: tdescs,
		SupportsDynamicLayers:       operation.Ptr(false),
		HasLiveData:                 operation.Ptr(false),
		MinScale:                    operation.Ptr(minScale),
		MaxScale:                    operation.Ptr(maxScale),
	}}, nil
}

// SupportedImageFormats lists the image formats ExportMapImage writes, as the
// SupportedImageFormatTypes property names them.
var supportedImageFormats = []string{"PNG", "PNG24", "PNG32", "JPG", "GIF", "BMP", "DIB", "TIFF", "JPGPNG", "SVG", "PDF"}

// GetServiceConfigurationInfo reports the service's limits.
func (s *Service) GetServiceConfigurationInfo(ctx context.Context, _ *operation.Call, _ *gisxml.GetServiceConfigurationInfo) (*gisxml.GetServiceConfigurationInfoResponse, error) {
	l := s.p.Limits
	return &gisxml.GetServiceConfigurationInfoResponse{Result: propertySet(
		"MaximumRecordCount", l.MaxRecordCount,
		"MaximumBufferCount", 100,
		"MaximumImageWidth", l.MaxImageWidth,
		"MaximumImageHeight", l.MaxImageHeight,
		"MaximumRequestBytes", int(l.MaxBodyBytes),
		"SupportedImageFormatTypes", strings.Join(supportedImageFormats, ","),
		"SupportedImageReturnTypes", "URL,MIME",
	)}, nil
}

// GetSupportedImageReturnTypes answers URL: both URL and MIME data are supported.
func (s *Service) GetSupportedImageReturnTypes(ctx context.Context, _ *operation.Call, _ *gisxml.GetSupportedImageReturnTypes) (*gisxml.GetSupportedImageReturnTypesResponse, error) {
	return &gisxml.GetSupportedImageReturnTypesResponse{Result: gisxml.ImageReturnURL}, nil
}

// IsFixedScaleMap reports whether the map draws only at fixed scales; mapfarm maps draw at any
// scale.
func (s *Service) IsFixedScaleMap(ctx context.Context, c *operation.Call, req *gisxml.IsFixedScaleMap) (*gisxml.IsFixedScaleMapResponse, error) {
	if _, err := operation.MapOf(c, req.MapName); err != nil {
		return nil, err
	}
	return &gisxml.IsFixedScaleMapResponse{Result: false}, nil
}
