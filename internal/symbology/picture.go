package symbology

// Picture symbol types. They come from requests (PictureMarkerSymbol and PictureFillSymbol in a
// LayerDrawingDescription, a selection symbol or a custom graphic), not from the YAML service
// definition. Symbol.Picture holds the image (a request's PictureUri is fetched into it before
// the symbol gets here).
//
// A pictureMarker is Symbol.Size points on its larger side (ArcObjects' IMarkerSymbol.Size; 0:
// the image's own size at 96 DPI), the aspect ratio kept, unless Symbol.Width gives its width
// (then Size is its height); PictureStyle.XScale and YScale stretch it further. Angle turns it,
// XOffset and YOffset move it.
//
// A pictureFill repeats the picture as tiles Symbol.Width × PictureStyle.Height points (either
// 0: from the other and the image's aspect ratio; both 0: the image's own size at 96 DPI), times
// XScale and YScale, XSeparation and YSeparation points apart, the pattern moved by XOffset and
// YOffset and turned by Angle. Symbol.Color is the fill's colour where the picture cannot be
// drawn, and the foreground of a two-colour picture when FgColor is not given.
const (
	PictureMarker SymbolType = "pictureMarker"
	PictureFill   SymbolType = "pictureFill"
)

// PictureStyle is what a picture symbol adds to Symbol. The zero value draws the picture as it
// is (scales of 0 mean 1).
type PictureStyle struct {
	// Height is a picture fill's tile height in points (0: from Width and the aspect ratio).
	Height float64
	// XScale and YScale stretch the picture (0 means 1).
	XScale float64
	YScale float64
	// XSeparation and YSeparation are the gaps between a picture fill's tiles, in points.
	XSeparation float64
	YSeparation float64
	// FgColor and BgColor recolour a two-colour picture (a 1-bit image: a palette of at most two
	// colours, or grey levels of only black and white): its darker colour is drawn in FgColor,
	// the lighter in BgColor; nil keeps the picture's own. Swap1Bit swaps the two.
	FgColor  *Color
	BgColor  *Color
	Swap1Bit bool
	// TransparentColor, when not nil, is the colour of the picture's pixels that are not drawn
	// (BitmapTransColor).
	TransparentColor *Color
}
