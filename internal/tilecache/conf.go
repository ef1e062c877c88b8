package tilecache

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/paulmach/orb"
)

// Names of the metadata files in a cache root.
const (
	ConfXML = "conf.xml"
	ConfCDI = "conf.cdi"
)

// typensNS is the namespace Esri writes in conf.xml and conf.cdi: the 10.0
// schema, even in caches made by later versions.
const typensNS = "http://www.esri.com/schemas/ArcGIS/10.0"

// ErrInvalidConf is wrapped by errors for conf.xml or conf.cdi content that
// cannot be used.
var ErrInvalidConf = errors.New("tilecache: invalid cache metadata")

// CacheInfo is the content of conf.xml: the tiling scheme (TileCacheInfo and
// TileImageInfo) and the storage layout (CacheStorageInfo).
type CacheInfo struct {
	Scheme  Scheme
	Storage StorageFormat
	// PacketSize is Esri's CacheStorageInfo.PacketSize; zero means the
	// format's own (128 for compact, 0 for exploded).
	PacketSize int
}

// MarshalConfXML returns conf.xml for info, in the layout of Esri's files:
// a CacheInfo root in the 10.0 typens namespace, every element with its
// xsi:type, four-space indentation.
func MarshalConfXML(info CacheInfo) ([]byte, error) {
	s := info.Scheme
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if info.Storage < Exploded || info.Storage > CompactV2 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidFormat, int(info.Storage))
	}
	packet := info.PacketSize
	if packet == 0 {
		packet = info.Storage.PacketSize()
	}
	var b bytes.Buffer
	w := xmlWriter{b: &b}
	b.WriteString(`<?xml version="1.0" encoding="utf-8" ?>` + "\n")
	b.WriteString(`<CacheInfo xsi:type="typens:CacheInfo" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:typens="` + typensNS + `">` + "\n")
	w.open(1, "TileCacheInfo", "TileCacheInfo")
	sr := s.SpatialReference
	srType := "ProjectedCoordinateSystem"
	if sr.Geographic {
		srType = "GeographicCoordinateSystem"
	}
	w.open(2, "SpatialReference", srType)
	if sr.WKT != "" {
		w.elem(3, "WKT", sr.WKT)
	}
	w.elem(3, "XOrigin", fmtFloat(sr.XOrigin))
	w.elem(3, "YOrigin", fmtFloat(sr.YOrigin))
	w.elem(3, "XYScale", fmtFloat(sr.XYScale))
	w.elem(3, "ZOrigin", fmtFloat(sr.ZOrigin))
	w.elem(3, "ZScale", fmtFloat(sr.ZScale))
	w.elem(3, "MOrigin", fmtFloat(sr.MOrigin))
	w.elem(3, "MScale", fmtFloat(sr.MScale))
	w.elem(3, "XYTolerance", fmtFloat(sr.XYTolerance))
	w.elem(3, "ZTolerance", fmtFloat(sr.ZTolerance))
	w.elem(3, "MTolerance", fmtFloat(sr.MTolerance))
	w.elem(3, "HighPrecision", strconv.FormatBool(sr.HighPrecision))
	if sr.WKID != 0 {
		w.elem(3, "WKID", strconv.Itoa(sr.WKID))
	}
	if sr.LatestWKID != 0 {
		w.elem(3, "LatestWKID", strconv.Itoa(sr.LatestWKID))
	}
	w.close(2, "SpatialReference")
	w.open(2, "TileOrigin", "PointN")
	w.elem(3, "X", fmtFloat(s.Origin[0]))
	w.elem(3, "Y", fmtFloat(s.Origin[1]))
	w.close(2, "TileOrigin")
	w.elem(2, "TileCols", strconv.Itoa(s.TileCols))
	w.elem(2, "TileRows", strconv.Itoa(s.TileRows))
	w.elem(2, "DPI", strconv.Itoa(s.DPI))
	w.open(2, "LODInfos", "ArrayOfLODInfo")
	for _, l := range s.LODs {
		w.open(3, "LODInfo", "LODInfo")
		w.elem(4, "LevelID", strconv.Itoa(l.LevelID))
		w.elem(4, "Scale", fmtFloat(l.Scale))
		w.elem(4, "Resolution", fmtFloat(l.Resolution))
		w.close(3, "LODInfo")
	}
	w.close(2, "LODInfos")
	w.close(1, "TileCacheInfo")
	w.open(1, "TileImageInfo", "TileImageInfo")
	w.elem(2, "CacheTileFormat", strings.ToUpper(s.Format))
	w.elem(2, "CompressionQuality", strconv.Itoa(s.CompressionQuality))
	w.elem(2, "Antialiasing", strconv.FormatBool(s.Antialiasing))
	w.close(1, "TileImageInfo")
	w.open(1, "CacheStorageInfo", "CacheStorageInfo")
	w.elem(2, "StorageFormat", info.Storage.String())
	w.elem(2, "PacketSize", strconv.Itoa(packet))
	w.close(1, "CacheStorageInfo")
	b.WriteString("</CacheInfo>\n")
	return b.Bytes(), nil
}

// xmlWriter writes indented elements.
type xmlWriter struct{ b *bytes.Buffer }

func (w xmlWriter) indent(depth int) { w.b.WriteString(strings.Repeat("    ", depth)) }

func (w xmlWriter) open(depth int, name, xsiType string) {
	w.indent(depth)
	fmt.Fprintf(w.b, "<%s xsi:type=\"typens:%s\">\n", name, xsiType)
}

func (w xmlWriter) close(depth int, name string) {
	w.indent(depth)
	fmt.Fprintf(w.b, "</%s>\n", name)
}

func (w xmlWriter) elem(depth int, name, text string) {
	w.indent(depth)
	fmt.Fprintf(w.b, "<%s>%s</%s>\n", name, escapeText(text), name)
}

// escapeText escapes character data; quotes stay as they are (Esri's WKT
// is full of them).
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// fmtFloat writes the shortest decimal that reads back as f, without an
// exponent.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// XML shapes for parsing; element names match in any namespace.
type (
	xmlCacheInfo struct {
		XMLName       xml.Name `xml:"CacheInfo"`
		TileCacheInfo struct {
			SpatialReference struct {
				Type          string  `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
				WKT           string  `xml:"WKT"`
				XOrigin       float64 `xml:"XOrigin"`
				YOrigin       float64 `xml:"YOrigin"`
				XYScale       float64 `xml:"XYScale"`
				ZOrigin       float64 `xml:"ZOrigin"`
				ZScale        float64 `xml:"ZScale"`
				MOrigin       float64 `xml:"MOrigin"`
				MScale        float64 `xml:"MScale"`
				XYTolerance   float64 `xml:"XYTolerance"`
				ZTolerance    float64 `xml:"ZTolerance"`
				MTolerance    float64 `xml:"MTolerance"`
				HighPrecision bool    `xml:"HighPrecision"`
				WKID          int     `xml:"WKID"`
				LatestWKID    int     `xml:"LatestWKID"`
			} `xml:"SpatialReference"`
			TileOrigin *struct {
				X float64 `xml:"X"`
				Y float64 `xml:"Y"`
			} `xml:"TileOrigin"`
			TileCols int `xml:"TileCols"`
			TileRows int `xml:"TileRows"`
			DPI      int `xml:"DPI"`
			LODInfos struct {
				LODInfo []struct {
					LevelID    int     `xml:"LevelID"`
					Scale      float64 `xml:"Scale"`
					Resolution float64 `xml:"Resolution"`
				} `xml:"LODInfo"`
			} `xml:"LODInfos"`
		} `xml:"TileCacheInfo"`
		TileImageInfo struct {
			CacheTileFormat    string `xml:"CacheTileFormat"`
			CompressionQuality int    `xml:"CompressionQuality"`
			Antialiasing       string `xml:"Antialiasing"`
		} `xml:"TileImageInfo"`
		CacheStorageInfo *struct {
			StorageFormat string `xml:"StorageFormat"`
			PacketSize    int    `xml:"PacketSize"`
		} `xml:"CacheStorageInfo"`
	}
	xmlEnvelope struct {
		XMLName xml.Name `xml:"EnvelopeN"`
		XMin    float64  `xml:"XMin"`
		YMin    float64  `xml:"YMin"`
		XMax    float64  `xml:"XMax"`
		YMax    float64  `xml:"YMax"`
	}
)

// ParseConfXML reads conf.xml. A file without CacheStorageInfo is an
// exploded cache (as ArcGIS 9.x wrote them). Scheme.Extent, which conf.xml
// does not hold, is set to the whole world for the well-known Web Mercator
// (3857, 102100, 102113, 900913) and WGS 84 (4326) ids and left empty
// otherwise ([Open] takes it from conf.cdi then). The scheme is validated;
// errors wrap ErrInvalidConf.
func ParseConfXML(data []byte) (CacheInfo, error) {
	var x xmlCacheInfo
	if err := xml.Unmarshal(data, &x); err != nil {
		return CacheInfo{}, fmt.Errorf("%w: conf.xml: %w", ErrInvalidConf, err)
	}
	tc := x.TileCacheInfo
	if tc.TileOrigin == nil {
		return CacheInfo{}, fmt.Errorf("%w: conf.xml: no TileOrigin", ErrInvalidConf)
	}
	sr := tc.SpatialReference
	s := Scheme{
		SpatialReference: SpatialReference{
			Geographic:    strings.Contains(sr.Type, "Geographic"),
			WKT:           sr.WKT,
			XOrigin:       sr.XOrigin,
			YOrigin:       sr.YOrigin,
			XYScale:       sr.XYScale,
			ZOrigin:       sr.ZOrigin,
			ZScale:        sr.ZScale,
			MOrigin:       sr.MOrigin,
			MScale:        sr.MScale,
			XYTolerance:   sr.XYTolerance,
			ZTolerance:    sr.ZTolerance,
			MTolerance:    sr.MTolerance,
			HighPrecision: sr.HighPrecision,
			WKID:          sr.WKID,
			LatestWKID:    sr.LatestWKID,
		},
		Origin:             orb.Point{tc.TileOrigin.X, tc.TileOrigin.Y},
		TileCols:           tc.TileCols,
		TileRows:           tc.TileRows,
		DPI:                tc.DPI,
		Format:             x.TileImageInfo.CacheTileFormat,
		CompressionQuality: x.TileImageInfo.CompressionQuality,
		Antialiasing:       strings.EqualFold(strings.TrimSpace(x.TileImageInfo.Antialiasing), "true"),
	}
	for _, l := range tc.LODInfos.LODInfo {
		s.LODs = append(s.LODs, LOD{LevelID: l.LevelID, Scale: l.Scale, Resolution: l.Resolution})
	}
	switch sr.WKID {
	case 3857, 102100, 102113, 900913:
		s.Extent = WebMercator().Extent
	case 4326:
		s.Extent = Geographic().Extent
	}
	info := CacheInfo{Scheme: s, Storage: Exploded}
	if si := x.CacheStorageInfo; si != nil {
		f, err := ParseStorageFormat(strings.TrimSpace(si.StorageFormat))
		if err != nil {
			return CacheInfo{}, fmt.Errorf("%w: conf.xml: %w", ErrInvalidConf, err)
		}
		info.Storage = f
		info.PacketSize = si.PacketSize
	}
	if s.Extent != (orb.Bound{}) {
		if err := s.Validate(); err != nil {
			return CacheInfo{}, fmt.Errorf("%w: conf.xml: %w", ErrInvalidConf, err)
		}
	}
	return info, nil
}

// MarshalConfCDI returns conf.cdi: the full extent of the cached data as an
// EnvelopeN.
func MarshalConfCDI(extent orb.Bound) []byte {
	var b bytes.Buffer
	w := xmlWriter{b: &b}
	b.WriteString(`<?xml version="1.0" encoding="utf-8" ?>` + "\n")
	b.WriteString(`<EnvelopeN xsi:type="typens:EnvelopeN" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:typens="` + typensNS + `">` + "\n")
	w.elem(1, "XMin", fmtFloat(extent.Min[0]))
	w.elem(1, "YMin", fmtFloat(extent.Min[1]))
	w.elem(1, "XMax", fmtFloat(extent.Max[0]))
	w.elem(1, "YMax", fmtFloat(extent.Max[1]))
	b.WriteString("</EnvelopeN>\n")
	return b.Bytes()
}

// ParseConfCDI reads conf.cdi. Errors wrap ErrInvalidConf.
func ParseConfCDI(data []byte) (orb.Bound, error) {
	var x xmlEnvelope
	if err := xml.Unmarshal(data, &x); err != nil {
		return orb.Bound{}, fmt.Errorf("%w: conf.cdi: %w", ErrInvalidConf, err)
	}
	b := orb.Bound{Min: orb.Point{x.XMin, x.YMin}, Max: orb.Point{x.XMax, x.YMax}}
	if !(b.Min[0] <= b.Max[0] && b.Min[1] <= b.Max[1]) {
		return orb.Bound{}, fmt.Errorf("%w: conf.cdi: envelope %v is inverted", ErrInvalidConf, b)
	}
	return b, nil
}

// WriteMetadata writes conf.xml and conf.cdi into the cache root (beside
// the layer folders). extent is the full extent of the cached data.
func (c *Cache) WriteMetadata(ctx context.Context, info CacheInfo, extent orb.Bound) error {
	if info.Storage == 0 {
		info.Storage = c.format
	}
	if info.Storage != c.format {
		return fmt.Errorf("tilecache: metadata says %v, cache is %v", info.Storage, c.format)
	}
	conf, err := MarshalConfXML(info)
	if err != nil {
		return err
	}
	if err := c.store.Put(ctx, path.Join(c.root, ConfCDI), MarshalConfCDI(extent), "application/xml"); err != nil {
		return fmt.Errorf("tilecache: write %s: %w", ConfCDI, err)
	}
	// conf.xml last: its presence marks a complete cache root.
	if err := c.store.Put(ctx, path.Join(c.root, ConfXML), conf, "application/xml"); err != nil {
		return fmt.Errorf("tilecache: write %s: %w", ConfXML, err)
	}
	return nil
}

// ReadMetadata reads conf.xml and (if present) conf.cdi from the cache root.
// A missing conf.cdi gives an empty extent; a scheme whose Extent conf.xml
// could not give takes the conf.cdi extent. A missing conf.xml gives an
// error wrapping fs.ErrNotExist.
func ReadMetadata(ctx context.Context, store Store, root string) (CacheInfo, orb.Bound, error) {
	data, err := store.Get(ctx, path.Join(root, ConfXML))
	if err != nil {
		return CacheInfo{}, orb.Bound{}, fmt.Errorf("tilecache: read %s: %w", ConfXML, err)
	}
	info, err := ParseConfXML(data)
	if err != nil {
		return CacheInfo{}, orb.Bound{}, err
	}
	var extent orb.Bound
	data, err = store.Get(ctx, path.Join(root, ConfCDI))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return CacheInfo{}, orb.Bound{}, fmt.Errorf("tilecache: read %s: %w", ConfCDI, err)
	default:
		if extent, err = ParseConfCDI(data); err != nil {
			return CacheInfo{}, orb.Bound{}, err
		}
	}
	if info.Scheme.Extent == (orb.Bound{}) {
		info.Scheme.Extent = extent
		if err := info.Scheme.Validate(); err != nil {
			return CacheInfo{}, orb.Bound{}, fmt.Errorf("%w: conf.xml with conf.cdi extent: %w", ErrInvalidConf, err)
		}
	}
	return info, extent, nil
}

// Open reads the cache root's conf.xml and returns the cache of one layer
// folder (FusedLayer for a fused cache) in the layout the metadata names,
// with the metadata. index may be nil.
func Open(ctx context.Context, store Store, root, layer string, index *IndexCache) (*Cache, CacheInfo, error) {
	info, _, err := ReadMetadata(ctx, store, root)
	if err != nil {
		return nil, CacheInfo{}, err
	}
	c, err := New(store, Options{Root: root, Layer: layer, Format: info.Storage, TileFormat: info.Scheme.Format, Index: index})
	if err != nil {
		return nil, CacheInfo{}, err
	}
	return c, info, nil
}

// HasLayer reports whether the cache root holds any object below the layer
// folder (a cheap List that stops at the first object).
func HasLayer(ctx context.Context, store Store, root, layer string) (bool, error) {
	found, err := blob.Any(ctx, store, path.Join(root, layer)+"/", nil)
	if err != nil {
		return false, fmt.Errorf("tilecache: list layer %q: %w", layer, err)
	}
	return found, nil
}
