// Package tilecache holds tile caches in object storage in Esri's layouts:
// tiling schemes, the one tile-coordinate type, planning of seeding work by
// bundle, reading and writing tiles in the exploded, compact V1 and compact
// V2 layouts, and the cache metadata files conf.xml and conf.cdi. It knows
// nothing of queues or rendering.
//
// # Tiles and schemes
//
// A [Tile] is {Level, Row, Col}, rows counted down from the [Scheme]'s
// top-left origin. [WebMercator] and [Geographic] return the common online
// schemes. [Scheme.TileBounds] and [Scheme.TilesCovering] convert between
// tiles and map coordinates; [Scheme.Cover] streams the tiles of an area of
// interest (any orb.Geometry) in memory proportional to the AOI's geometry,
// and [Cover.Bundles] groups them into metatiles per bundle, so that a
// planner can give each bundle exactly one writer; [Cover.TilesIn] gives the
// cover's own tiles in one bundle (what a delete removes). [Scheme.MetatileArea]
// says what to render for a metatile with a buffer and where each tile lies
// in the image.
//
// # Storage
//
// A [Cache] is one layer folder (FusedLayer "_alllayers" for a fused cache,
// or a layer name) below a cache root, in one [StorageFormat], over any
// [Store] (internal/blob's MinIO and Disk). Keys:
//
//	<root>/conf.xml, <root>/conf.cdi
//	<root>/<layer>/Lnn/Rxxxxxxxx/Cxxxxxxxx.<ext>        exploded
//	<root>/<layer>/Lnn/RrrrrCcccc.bundle (+ .bundlx)    compact V2 (V1)
//
// Writes go through a [BundleWriter], which merges the changes with the
// stored bundle and rewrites it whole (objects are immutable), with bytes
// that depend only on the tiles, so a repeated write is a no-op. Reads of
// compact tiles use an [IndexCache] of parsed bundle indexes, so a tile read
// is one ranged GET once the index is cached; its optional page cache
// (IndexCacheOptions.PageBytes) keeps 256 KiB pages of bundles, so that one
// ranged GET serves the tiles stored next to each other.
//
// The exploded layout's folder and file names (Lnn, Rxxxxxxxx,
// Cxxxxxxxx.ext) are written and parsed only here ([ParseTilePath]).
//
// The byte layouts are described in docs/tile-caches.md.
package tilecache
