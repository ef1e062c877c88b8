// Package tilearchive writes and reads the single-file tile archives a tile cache is taken
// offline in: PMTiles version 3 (pmtiles.go) and MBTiles 1.3 (mbtiles.go). Both hold tiles of
// the Web Mercator grid only, addressed by zoom, column and row from the top (ZXY, as XYZ
// clients count; MBTiles' own rows count from the bottom, which mbtiles.go converts). Tiles are
// stored as given and read back byte for byte: a vector tile gzipped in the cache stays gzipped
// in the archive, as both formats want.
//
// The PMTiles writer is this package's own rather than github.com/protomaps/go-pmtiles: that
// module's pmtiles package imports the AWS, Azure and Google Cloud storage SDKs (its bucket
// code), which would more than double the farm's dependencies for a format of a 127-byte header,
// varint directories and Hilbert tile ids.
package tilearchive

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// ErrFormat is wrapped by errors for a file that is not a well-formed archive.
var ErrFormat = errors.New("tilearchive: malformed archive")

// Kind is an archive format.
type Kind int

// Archive formats.
const (
	PMTiles Kind = iota + 1
	MBTiles
)

// KindOf returns the archive format a file name asks for by its extension: .pmtiles or
// .mbtiles (any case).
func KindOf(path string) (Kind, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pmtiles":
		return PMTiles, nil
	case ".mbtiles":
		return MBTiles, nil
	}
	return 0, fmt.Errorf("tilearchive: %s: the file name must end in .pmtiles or .mbtiles", path)
}

// ZXY is a tile of the Web Mercator grid: zoom Z has 2^Z × 2^Z tiles, X counts columns from
// the west, Y rows from the north.
type ZXY struct{ Z, X, Y int }

func (t ZXY) String() string { return fmt.Sprintf("%d/%d/%d", t.Z, t.X, t.Y) }

// valid reports whether t lies in its zoom's grid (zooms 0 to 30).
func (t ZXY) valid() bool {
	if t.Z < 0 || t.Z > 30 {
		return false
	}
	n := 1 << t.Z
	return t.X >= 0 && t.Y >= 0 && t.X < n && t.Y < n
}

// VectorLayer describes one layer of vector tiles, as the vector_layers of TileJSON and of
// MBTiles' json metadata.
type VectorLayer struct {
	ID          string            `json:"id"`
	Description string            `json:"description,omitempty"`
	MinZoom     int               `json:"minzoom"`
	MaxZoom     int               `json:"maxzoom"`
	Fields      map[string]string `json:"fields"`
}

// Metadata describes an archive's tiles.
type Metadata struct {
	Name string
	// Format is the tiles' format: "png", "jpg", "webp" or "pbf" (Mapbox Vector Tiles, gzipped).
	Format      string
	Description string
	Attribution string
	// Bounds is the area covered in degrees: west, south, east, north.
	Bounds [4]float64
	// Center is longitude, latitude and zoom of a default view.
	Center [3]float64
	// MinZoom and MaxZoom are the zooms that hold tiles; a writer sets them from the tiles it
	// was given.
	MinZoom, MaxZoom int
	// VectorLayers lists the layers of vector tiles (format pbf).
	VectorLayers []VectorLayer
}

// Writer writes an archive. Put may be called in any tile order; nothing is a valid archive
// until Close returns nil. Abort (or a failed Close) removes what was written.
type Writer interface {
	Put(t ZXY, data []byte) error
	// Close writes the metadata (MinZoom and MaxZoom come from the tiles put) and finishes the
	// file.
	Close(md Metadata) error
	Abort()
}

// Create starts an archive of the kind the file name asks for (KindOf), replacing any file
// of that name when it is closed.
func Create(path string) (Writer, error) {
	k, err := KindOf(path)
	if err != nil {
		return nil, err
	}
	if k == PMTiles {
		return createPMTiles(path)
	}
	return createMBTiles(path)
}

// Reader reads an archive.
type Reader interface {
	Metadata() Metadata
	// Tiles yields every tile with its bytes as stored, valid until the next tile is yielded
	// (clone them to keep them); an error ends the sequence (with a zero tile and nil bytes)
	// and is returned by Err.
	Tiles() iter.Seq2[ZXY, []byte]
	Err() error
	Close() error
}

// Open opens an archive of the kind its file name says (KindOf).
func Open(path string) (Reader, error) {
	k, err := KindOf(path)
	if err != nil {
		return nil, err
	}
	if k == PMTiles {
		return openPMTiles(path)
	}
	return openMBTiles(path)
}

// zoomRange tracks the zooms of the tiles put into a writer.
type zoomRange struct {
	min, max int
	any      bool
}

func (z *zoomRange) add(zoom int) {
	if !z.any || zoom < z.min {
		z.min = zoom
	}
	if !z.any || zoom > z.max {
		z.max = zoom
	}
	z.any = true
}

// jsonMetadata is the JSON both formats keep the metadata in (PMTiles' metadata section, the
// MBTiles json row for vector_layers).
type jsonMetadata struct {
	Name         string        `json:"name,omitempty"`
	Format       string        `json:"format,omitempty"`
	Description  string        `json:"description,omitempty"`
	Attribution  string        `json:"attribution,omitempty"`
	Type         string        `json:"type,omitempty"`
	VectorLayers []VectorLayer `json:"vector_layers,omitempty"`
}

func marshalJSONMetadata(md Metadata) ([]byte, error) {
	return json.Marshal(jsonMetadata{Name: md.Name, Format: md.Format, Description: md.Description,
		Attribution: md.Attribution, Type: "baselayer", VectorLayers: md.VectorLayers})
}

// publish gives a finished archive, written to the temporary file tmp, the mode of a file the
// user made (0644: os.CreateTemp makes 0600) and renames it to path.
func publish(tmp, path string) error {
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
