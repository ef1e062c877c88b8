// Package vectorstyle writes the Mapbox GL style (version 8) of a map of a service: the
// resources/styles/root.json resource an ArcGIS VectorTileServer serves next to its tiles, which
// MapLibre GL and the ArcGIS Maps SDK draw the tiles with. It reads the same symbology the raster
// renderer draws (the symbology package's renderers, symbols and label classes) and says it in style
// layers, so a vector map looks like the raster one:
//
//   - a map layer is one tile layer (source-layer: the layer's name, as the MVT encoder names
//     it) drawn by a fill and an outline line layer (polygons), a line layer (polylines), a
//     circle layer (points whose symbols are all simple circles) or a symbol layer with sprite
//     icons (any other marker; Icons names them, internal/vectorsprite draws them);
//   - a simple renderer gives literal paint values; a unique value renderer a `match` over its
//     fields' values as text (joined by its delimiter, NULL as "<Null>"); a class breaks
//     renderer a `step` over its field whose stops are the classes' upper bounds nudged up to
//     the next float, so a class holds (lower, upper] as in ArcGIS. Without a default symbol a
//     filter drops the features no class takes, as the raster renderer does;
//   - a label class is a symbol layer with a text-field from its field or expression, the font
//     stack vectorfonts serves for its weight and slant, its size, colour and halo;
//   - scale ranges become minzoom/maxzoom (zoom z is the scale 295,828,763.8 / 2^z, 512-pixel
//     tiles at 96 DPI, as ArcGIS's vector tile LODs are);
//   - layers are listed bottom-up (the map's last layer first), labels above every layer.
//
// Sizes in points become pixels at 96 DPI (× 4/3); on a map with a reference scale they grow
// with the zoom as the raster renderer's do. What a style cannot say is in docs/vector-styles.md.
package vectorstyle
