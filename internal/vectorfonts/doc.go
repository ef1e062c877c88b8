// Package vectorfonts makes the glyph ranges a vector tile style's text is drawn with: the
// `resources/fonts/{fontstack}/{range}.pbf` resources of an ArcGIS VectorTileServer, which MapLibre
// GL and the ArcGIS Maps SDK fetch for every run of 256 code points a label uses.
//
// A range is the glyphs protocol buffer MapLibre reads (Mapbox's glyphs.proto, version 1): one
// fontstack with its name and range, and a glyph per code point the font has, each with its id
// (the code point), its metrics in pixels at a 24 px font size (width and height of its ink box,
// left and top bearings, advance) and a signed distance field of the ink box with a 3 px border
// (bitmap, one byte a pixel, (width+6) × (height+6)). A byte of 192 lies on the glyph's outline,
// more is inside, less outside, falling by 255/8 a pixel of distance, as MapLibre's text shader
// expects.
//
// Glyphs are drawn from the fonts the renderer embeds (DejaVu Sans in four styles, see
// render.Fonts): golang.org/x/image/font/sfnt reads the outlines and golang.org/x/image/vector
// rasterises them to coverage; the distance field is computed here, with Felzenszwalb and
// Huttenlocher's exact Euclidean distance transform run on the outside and the inside of the
// coverage, partly covered pixels placing the edge inside them.
//
// A font stack is a comma-separated list of font names. Every name draws DejaVu Sans, as in the
// raster renderer: the first name of the stack chooses the style ("Bold" in it asks for bold,
// "Italic" or "Oblique" for oblique), so the stacks a generated style names (StackName) and the
// stacks a hand-written one names ("Arial Unicode MS Bold") are both answered. Ranges are cached
// by style and range, in a byte-bounded LRU cache (memcache) shared by every stack.
package vectorfonts
