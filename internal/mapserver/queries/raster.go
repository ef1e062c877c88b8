package queries

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// QueryRasterValue returns the image stored in the raster field (service definition key
// `rasterField`) of each row of RowIDs, in order: an ImageResult with the image's size. The
// image is returned as stored, or re-encoded when ImageType asks for another of PNG, PNG24,
// PNG32 and JPG; with gisImageReturnURL it comes as a data: URL (RFC 2397). FieldName, when
// given, must name the raster field. Rows that do not exist or have no image are skipped.
func (s *Service) QueryRasterValue(ctx context.Context, c *operation.Call, req *gisxml.QueryRasterValue) (*gisxml.QueryRasterValueResponse, error) {
	src, l, err := sourceOf(c, req.MapName, req.SourceTableID)
	if err != nil {
		return nil, err
	}
	out, err := s.rasters(ctx, src, l, "", req.RowIDs, req.FieldName, req.ImageType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRasterValueResponse{Result: out}, nil
}

// QueryRasterValue2 is QueryRasterValue with the layer from a MapTableDescription, whose
// definition expression limits the rows.
func (s *Service) QueryRasterValue2(ctx context.Context, c *operation.Call, req *gisxml.QueryRasterValue2) (*gisxml.QueryRasterValue2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := s.rasters(ctx, src, l, defExpr, req.RowIDs, req.FieldName, req.ImageType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRasterValue2Response{Result: out}, nil
}

func (s *Service) rasters(ctx context.Context, src *source, l *catalog.Layer, defExpr string, ids gisxml.ArrayOfInt, field *string, it *gisxml.ImageType, publish publishFunc) (gisxml.ArrayOfImageResult, error) {
	if l == nil || l.Def.RasterField == "" {
		return nil, operation.Invalid("%s %d (%s) has no raster field", src.kind, src.id, src.name)
	}
	if field != nil && *field != "" && !strings.EqualFold(*field, l.Def.RasterField) {
		return nil, operation.Invalid("FieldName %q is not the raster field of layer %d (%s): use %s", *field, src.id, src.name, l.Def.RasterField)
	}
	format, asURL := "", false
	if it != nil {
		switch it.ImageFormat {
		case "", gisxml.ImageNone:
		case gisxml.ImagePNG, gisxml.ImagePNG24, gisxml.ImagePNG32:
			format = "png"
		case gisxml.ImageJPG:
			format = "jpeg"
		default:
			return nil, operation.Invalid("ImageType/ImageFormat %s is not supported: use PNG, PNG24, PNG32 or JPG", it.ImageFormat)
		}
		asURL = it.ImageReturnType == gisxml.ImageReturnURL
	}
	p, err := newPlan(ctx, src, nil, defExpr)
	if err != nil {
		return nil, err
	}
	col := src.info.FieldIndex(l.Def.RasterField)
	found, err := p.byID(ids, []int{col})
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfImageResult{}
	for _, id := range ids {
		f, ok := found[int64(id)]
		if !ok {
			continue
		}
		data, _ := f.Values[col].([]byte)
		if len(data) == 0 {
			continue
		}
		cfg, stored, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, operation.Invalid("row %d of layer %d: the raster field does not hold a PNG or JPEG image: %v", id, src.id, err)
		}
		if format != "" && format != stored {
			if data, err = reencode(data, format); err != nil {
				return nil, err
			}
			stored = format
		}
		mime := "image/" + stored
		r := &gisxml.ImageResult{ImageWidth: cfg.Width, ImageHeight: cfg.Height, ImageDPI: 96, ImageType: operation.Ptr(mime)}
		if asURL {
			url, err := publish(data, mime)
			if err != nil {
				return nil, err
			}
			r.ImageURL = url
		} else {
			r.ImageData = data
		}
		out = append(out, r)
		if len(out) >= s.maxRecords() {
			break
		}
	}
	return out, nil
}

func reencode(data []byte, format string) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&buf, img)
	}
	return buf.Bytes(), err
}

// MarkRaster types a layer's raster field as gisFieldTypeRaster in a field list.
func MarkRaster(fs *gisxml.Fields, name string) {
	if fs == nil || name == "" {
		return
	}
	for _, f := range fs.FieldArray {
		if f.Name == name {
			f.Type = gisxml.FieldTypeRaster
		}
	}
}
