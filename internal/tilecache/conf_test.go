package tilecache_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/paulmach/orb"

	goldenfile "github.com/mapfarm/mapfarm/internal/golden"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// golden compares got with testdata/name, or rewrites it with MAPFARM_UPDATE_GOLDEN=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func TestConfGolden(t *testing.T) {
	geo := tilecache.Geographic()
	geo.LODs = geo.LODs[:4]
	geo.Antialiasing = true
	for name, info := range map[string]tilecache.CacheInfo{
		"conf-webmercator-compactv2.xml": {Scheme: tilecache.WebMercator(), Storage: tilecache.CompactV2},
		"conf-geographic-exploded.xml":   {Scheme: geo, Storage: tilecache.Exploded},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := tilecache.MarshalConfXML(info)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, data)
			back, err := tilecache.ParseConfXML(data)
			if err != nil {
				t.Fatal(err)
			}
			want := info
			want.PacketSize = info.Storage.PacketSize()
			if !reflect.DeepEqual(back, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", back, want)
			}
		})
	}
	cdi := tilecache.MarshalConfCDI(orb.Bound{Min: orb.Point{-20037507.229594339, -20037507.229594339}, Max: orb.Point{20037507.229594339, 20037507.229594339}})
	golden(t, "conf-webmercator.cdi", cdi)
}

func TestParseSampleConf(t *testing.T) {
	data, err := os.ReadFile("testdata/sample-conf.xml")
	if err != nil {
		t.Fatal(err)
	}
	info, err := tilecache.ParseConfXML(data)
	if err != nil {
		t.Fatal(err)
	}
	s := info.Scheme
	if info.Storage != tilecache.CompactV2 || info.PacketSize != 128 {
		t.Errorf("storage %v packet %d", info.Storage, info.PacketSize)
	}
	if s.SpatialReference.WKID != 3857 || s.SpatialReference.Geographic || !s.SpatialReference.HighPrecision ||
		s.SpatialReference.XYScale != 142878261.42550784 || s.SpatialReference.ZTolerance != 0.00020000000000000001 {
		t.Errorf("spatial reference %+v", s.SpatialReference)
	}
	if s.Origin != (orb.Point{-20037508.342787001, 20037508.342787001}) || s.TileCols != 256 || s.TileRows != 256 || s.DPI != 96 {
		t.Errorf("origin %v tile %d×%d dpi %d", s.Origin, s.TileCols, s.TileRows, s.DPI)
	}
	if s.Format != "JPEG" || s.CompressionQuality != 75 || s.Antialiasing {
		t.Errorf("image info %q %d %v", s.Format, s.CompressionQuality, s.Antialiasing)
	}
	if len(s.LODs) != 20 || s.LODs[19] != (tilecache.LOD{LevelID: 19, Scale: 1128.4971760000001, Resolution: 0.29858214164761665}) {
		t.Errorf("LODs: %d, last %+v", len(s.LODs), s.LODs[len(s.LODs)-1])
	}
	// Our Web Mercator preset agrees with the sample on every level it has.
	wm := tilecache.WebMercator()
	for _, l := range s.LODs {
		p, _ := wm.LOD(l.LevelID)
		if !near(p.Scale, l.Scale, 1e-9) || !near(p.Resolution, l.Resolution, 1e-9) {
			t.Errorf("level %d: preset %+v, sample %+v", l.LevelID, p, l)
		}
	}
	if rows, cols, _ := s.MatrixSize(3); rows != 8 || cols != 8 {
		t.Errorf("sample scheme level 3: %d×%d", rows, cols)
	}
	// Writing it back and parsing again keeps every value.
	out, err := tilecache.MarshalConfXML(info)
	if err != nil {
		t.Fatal(err)
	}
	again, err := tilecache.ParseConfXML(out)
	if err != nil || !reflect.DeepEqual(again, info) {
		t.Errorf("sample round trip: %v\n got %+v\nwant %+v", err, again, info)
	}
	// The structure matches: same element and attribute lines, up to the
	// number formatting.
	if !bytes.Contains(out, []byte(`<CacheInfo xsi:type="typens:CacheInfo" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:typens="http://www.esri.com/schemas/ArcGIS/10.0">`)) ||
		!bytes.Contains(out, []byte(`<StorageFormat>esriMapCacheStorageModeCompactV2</StorageFormat>`)) ||
		!bytes.Contains(out, []byte(`<SpatialReference xsi:type="typens:ProjectedCoordinateSystem">`)) ||
		!bytes.Contains(out, []byte(`PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere"`)) {
		t.Errorf("written conf.xml lacks the sample's structure:\n%s", out)
	}
}

func TestParseSampleCDI(t *testing.T) {
	data, err := os.ReadFile("testdata/sample-conf.cdi")
	if err != nil {
		t.Fatal(err)
	}
	b, err := tilecache.ParseConfCDI(data)
	if err != nil {
		t.Fatal(err)
	}
	want := orb.Bound{Min: orb.Point{-20037507.229594339, -20037507.229594339}, Max: orb.Point{20037507.229594339, 20037507.229594339}}
	if b != want {
		t.Errorf("cdi %v", b)
	}
	back, err := tilecache.ParseConfCDI(tilecache.MarshalConfCDI(b))
	if err != nil || back != b {
		t.Errorf("cdi round trip %v %v", back, err)
	}
}

func TestParseConfErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"not xml":        "<CacheInfo",
		"no origin":      `<CacheInfo><TileCacheInfo><TileCols>256</TileCols></TileCacheInfo></CacheInfo>`,
		"bad storage":    `<CacheInfo><TileCacheInfo><SpatialReference><WKID>3857</WKID></SpatialReference><TileOrigin><X>0</X><Y>0</Y></TileOrigin></TileCacheInfo><CacheStorageInfo><StorageFormat>zip</StorageFormat></CacheStorageInfo></CacheInfo>`,
		"invalid scheme": `<CacheInfo><TileCacheInfo><SpatialReference><WKID>3857</WKID></SpatialReference><TileOrigin><X>-20037508.342787</X><Y>20037508.342787</Y></TileOrigin><TileCols>256</TileCols><TileRows>256</TileRows><DPI>96</DPI></TileCacheInfo><TileImageInfo><CacheTileFormat>PNG</CacheTileFormat></TileImageInfo></CacheInfo>`,
	} {
		if _, err := tilecache.ParseConfXML([]byte(doc)); !errors.Is(err, tilecache.ErrInvalidConf) {
			t.Errorf("%s: %v, want ErrInvalidConf", name, err)
		}
	}
	// Without CacheStorageInfo a cache is exploded.
	data, _ := tilecache.MarshalConfXML(tilecache.CacheInfo{Scheme: tilecache.WebMercator(), Storage: tilecache.CompactV2})
	i := bytes.Index(data, []byte("    <CacheStorageInfo"))
	j := bytes.Index(data, []byte("</CacheStorageInfo>\n")) + len("</CacheStorageInfo>\n")
	info, err := tilecache.ParseConfXML(append(data[:i:i], data[j:]...))
	if err != nil || info.Storage != tilecache.Exploded {
		t.Errorf("no storage info: %v, %v", info.Storage, err)
	}
	if _, err := tilecache.ParseConfCDI([]byte(`<EnvelopeN><XMin>1</XMin><XMax>0</XMax></EnvelopeN>`)); !errors.Is(err, tilecache.ErrInvalidConf) {
		t.Errorf("inverted cdi: %v", err)
	}
}
