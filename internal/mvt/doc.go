// Package mvt encodes one tile of Mapbox Vector Tile 2.1 from the features
// of a map's layers, as they come from feature.Source queries.
//
// A tile is a rectangle in map units (Tile): one of Web Mercator's z/x/y
// (WebMercatorTile) or any tile of a cache's own tiling scheme
// (SchemeTile, over tilecache.Scheme). The sources must already be in the
// tile's coordinate system; reprojection is the caller's (feature.Reprojected).
//
// Each feature's geometry goes through these steps, in this order:
//
//  1. mapped to tile coordinates (floating point, y down, 0..Extent);
//  2. clipped to the tile plus Options.Buffer (github.com/paulmach/orb/clip),
//     before anything else so that a country crossing a low-zoom tile costs
//     only the part in the tile;
//  3. simplified with Douglas-Peucker at Options.Tolerance extent units
//     (github.com/paulmach/orb/simplify);
//  4. quantised to integers by rounding, with repeated points, collinear
//     points and zero-area spikes removed, lines of one point and rings of
//     fewer than three points dropped;
//  5. made simple (MVT 2.1 §4.3.4.4): a ring that touches or crosses itself
//     once quantised (the overlapping edges orb/clip's Sutherland-Hodgman
//     clipper leaves along the buffer's edge, a neck that rounding closes,
//     a hole drawn in the shell's ring, a bow tie) is noded, cut into loops
//     at its repeated vertices and cleaned again; loops of zero area go,
//     loops wound as the ring's largest one become exteriors, the others
//     holes of the exterior they lie in. A polygon whose exterior leaves
//     nothing is dropped with its holes. Rings that are already simple, the
//     vast majority, cost one check (a sweep over x);
//  6. rings wound as the specification says: exterior rings of positive
//     area by its surveyor's formula in tile coordinates (clockwise on
//     screen), interior rings of negative area;
//  7. written as commands (MoveTo, LineTo, ClosePath) with zigzag deltas.
//
// Steps 4 to 7 and the protobuf writing are this package's own, not orb's
// encoding/mvt: that encoder truncates coordinates instead of rounding them,
// keeps the repeated points truncation makes (a LineTo of (0,0), which the
// specification forbids), writes rings in whatever orientation they come,
// and wants features as GeoJSON maps of properties, which costs an
// allocation per attribute on dense tiles. The wire format is written with
// google.golang.org/protobuf/encoding/protowire.
//
// Feature ids are the object IDs (Feature.ID; none for a negative one), so
// they are unique within a layer. Attributes are the columns a Layer names;
// NULLs and BLOBs are left out (a vector tile value cannot be NULL), dates
// are written as milliseconds since 1970 as the ArcGIS REST API writes them.
//
// Limits (docs/vector-tiles.md): at most Options.MaxFeatures features in a
// tile — beyond that the tile is thinned (features are read in object-ID
// order, layer by layer, and the rest are left out) and Result.Thinned says
// so; at most Options.MaxBytes bytes before compression — beyond that
// Encode fails with ErrTooLarge, since cutting features to fit would give a
// map that silently lies about a whole area; and Options.Timeout for the
// whole tile, after which Encode fails with an error wrapping
// context.DeadlineExceeded. A cancelled context stops the source scans.
//
// Known gap: each ring is simple, but rings are repaired one at a time:
// the parts of a multipolygon can overlap or nest after simplification and
// rounding, a hole put along its shell's edge shares it, and the loops of
// a self-crossing ring can overlap (docs/vector-tiles.md, "Known gaps").
//
// The package mvtcheck decodes tiles and checks them against the
// specification; the tests run it on every tile they encode.
package mvt
