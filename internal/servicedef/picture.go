package servicedef

// Picture symbol types. They come from requests (PictureMarkerSymbol and PictureFillSymbol in a
// LayerDrawingDescription), not from the YAML service definition: Symbol.Picture holds the image,
// Symbol.Size the picture's width in points (0: the image's own width at 96 DPI; a picture fill
// repeats it as tiles of that width), and Symbol.Color a picture fill's colour where the picture
// cannot be decoded.
const (
	PictureMarker SymbolType = "pictureMarker"
	PictureFill   SymbolType = "pictureFill"
)
