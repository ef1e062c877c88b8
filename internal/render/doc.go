// Package render draws maps: it turns layers of features with symbols and labels into an image for a
// View (extent, pixel size, DPI, rotation), and encodes that image as PNG, JPEG or another format.
//
// Drawing goes through a Surface, a small set of drawing calls (paths, fill, stroke, text, markers,
// transforms and opacity groups). GGSurface is the raster backend built on github.com/fogleman/gg; its
// hot paths (polygon fills, thin strokes, glyphs with halos) bypass gg's generic rasterizer and draw
// straight into the image with golang.org/x/image/vector and cached glyph masks. A large image
// (256 K pixels or more) drawn by Renderer.Draw while a core is free has its fills and thin strokes
// recorded as a display list (polygons and colours, stroke outlines built once) and replayed in two
// horizontal bands by two goroutines, each compositing every operation in order within its own rows
// and with the tiles of a sequential draw, so the image is byte-identical to drawing on one core;
// the list is replayed before anything else draws (text, images, wide or dashed strokes, groups).
// A core is free when fewer Draw calls than GOMAXPROCS are in progress: a worker drawing as many
// images at once as it has cores draws each on one. SVGSurface and PDFSurface are the vector
// backends (surface_svg.go, surface_pdf.go, with a PDF 1.4 writer of our own); Renderer.DrawTo
// draws a Map on any Surface and Renderer.DrawEncoded picks the surface for an output Format.
// DrawScaleBar draws scale bars (scalebar.go) on any Surface too.
//
// The renderer works in pixel space: each geometry is transformed once, generalised to the output
// resolution (vertices closer than half a pixel are dropped), clipped to the image and then drawn.
// Labels are collected while layers are drawn and placed afterwards, highest priority first (then
// the largest features first), with collision avoidance across all layers (boxes indexed in a grid)
// and no label cut at the image edge (a label that does not fit whole is moved inside or dropped).
// Each feature gets at most one label: polygons at an interior point of their largest visible part
// (an approximate pole of inaccessibility, never outside the polygon, with nearby fallback
// positions), points beside the marker at the first of eight positions that is free, and lines
// along their longest part, each glyph at its own position and angle on the line (a glyph run,
// Surface.GlyphRun): the middle of the line's visible part first, then positions further along
// either way, reading left to right, never where the line turns more than 30° between two glyphs,
// with one collision box per glyph. A label on a straight stretch is drawn as straight text.
//
// Text is DejaVu Sans, embedded in regular, bold, oblique and bold oblique (every font name draws
// it, see Fonts), with underline and strikethrough; character markers (Symbol.Character) are glyph
// outlines filled as paths, so they look the same on every surface.
//
// Typical use:
//
//	img, err := render.Draw(ctx, m, v)
//	if err != nil { ... }
//	defer render.Release(img)
//	err = render.Encode(w, img, render.PNG, render.EncodeOptions{})
package render
