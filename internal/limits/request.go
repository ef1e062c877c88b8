package limits

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// Defaults of the request limits (docs/limits.md has the reasoning).
const (
	DefaultMaxVertices    = 100_000
	DefaultMaxIDs         = 100_000
	DefaultMaxStringBytes = 64 << 10
	DefaultMaxImageWidth  = 4096
	DefaultMaxImageHeight = 4096
	DefaultMaxImageDPI    = 2400
	DefaultMaxPoints      = 100_000
)

// Request bounds one decoded SOAP request. The zero value of a field means its default.
type Request struct {
	// MaxVertices bounds the vertices of all the geometries of one request together: query and
	// identify shapes, find and selection geometries, graphics, map areas.
	MaxVertices int
	// MaxIDs bounds the ids of all the id lists of one request together (FIDSet, layer ids,
	// row and attachment ids; not ToMapPoints's screen coordinates, which are points).
	MaxIDs int
	// MaxStringBytes bounds each string value: where clauses and definition expressions, field
	// lists, search strings, names, texts. PictureUri is exempt: a data: URI carries a whole
	// picture, bounded by the body size and pictures.maxBytes.
	MaxStringBytes int
	// MaxImageWidth and MaxImageHeight bound every ImageDisplay.
	MaxImageWidth, MaxImageHeight int
	// MaxImageDPI bounds ImageDisplay/ImageDPI and CenterAndScale/DPI: 1 to it, 0 meaning 96;
	// never NaN, infinite or negative. At most 2400, the renderer's own bound.
	MaxImageDPI float64
}

// ImageSize is the largest image a front end (WMS, REST export) draws: maxW by maxH, each
// replaced by its default (DefaultMaxImageWidth, DefaultMaxImageHeight) where zero or negative.
func ImageSize(maxW, maxH int) (width, height int) {
	l := Request{MaxImageWidth: maxW, MaxImageHeight: maxH}.withDefaults()
	return l.MaxImageWidth, l.MaxImageHeight
}

func (l Request) withDefaults() Request {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxVertices, DefaultMaxVertices)
	def(&l.MaxIDs, DefaultMaxIDs)
	def(&l.MaxStringBytes, DefaultMaxStringBytes)
	def(&l.MaxImageWidth, DefaultMaxImageWidth)
	def(&l.MaxImageHeight, DefaultMaxImageHeight)
	if !(l.MaxImageDPI > 0) {
		l.MaxImageDPI = DefaultMaxImageDPI
	}
	return l
}

// Check walks a decoded request (a pointer to a gisxml request struct of operation op) and
// returns an *Error for the first limit it is over, naming the element at fault by its path
// (op/Element/Child[i]). It reads every value once and allocates only for its answer.
func (l Request) Check(op string, req any) error {
	_, err := l.Measure(op, req)
	return err
}

// Size is how much work a decoded request carries, as Check's walk counted it: the vertices of
// its geometries, the ids of its id lists and the points of its screen coordinates
// (ToMapPoints). The api uses it to tell heavy requests from normal ones.
type Size struct {
	Vertices, IDs, Points int
}

// Measure is Check that also returns the request's Size. After an error the Size counts only
// what was walked before it.
func (l Request) Measure(op string, req any) (Size, error) {
	w := &walker{l: l.withDefaults()}
	w.value(reflect.ValueOf(req), &step{name: op})
	return Size{Vertices: w.vertices, IDs: w.ids, Points: w.points}, w.err
}

// step is one element of the path to the value being walked; the path is spelled out only
// for an error.
type step struct {
	up    *step
	name  string // the element's name; "" for an item of an array
	index int    // the item's index
}

func (s *step) String() string {
	var parts []string
	suffix := ""
	for ; s != nil; s = s.up {
		if s.name == "" {
			suffix = "[" + strconv.Itoa(s.index) + "]" + suffix
			continue
		}
		parts = append(parts, s.name+suffix)
		suffix = ""
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

type walker struct {
	l        Request
	vertices int
	ids      int
	points   int // screen points: the values of ScreenXValues
	err      error
}

var (
	typeArrayOfInt     = reflect.TypeFor[gisxml.ArrayOfInt]()
	typePointN         = reflect.TypeFor[gisxml.PointN]()
	typeImageDisplay   = reflect.TypeFor[gisxml.ImageDisplay]()
	typeCenterAndScale = reflect.TypeFor[gisxml.CenterAndScale]()
)

// screenValues are the ArrayOfInt fields that are coordinates, not ids (ToMapPoints).
var screenValues = map[string]bool{"ScreenXValues": true, "ScreenYValues": true}

func (w *walker) value(v reflect.Value, at *step) {
	if w.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.value(v.Elem(), at)
		}
	case reflect.Struct:
		w.structure(v, at)
	case reflect.Slice:
		switch {
		case v.Type().Elem().Kind() == reflect.Uint8:
			// bytes (pictures, images) are bounded by the body and the decoded size
		case v.Type() == typeArrayOfInt:
			if screenValues[at.name] {
				if at.name == "ScreenXValues" {
					w.points += v.Len()
				}
				return // points: maxPoints, checked by the operation
			}
			w.ids += v.Len()
			if w.ids > w.l.MaxIDs {
				w.err = Refuse(IDs, "%s: more than %d ids in the request's id lists; the limit is %d (%s)", at, w.l.MaxIDs, w.l.MaxIDs, IDs)
			}
		default:
			for i := 0; i < v.Len() && w.err == nil; i++ {
				w.value(v.Index(i), &step{up: at, index: i})
			}
		}
	case reflect.String:
		if n := v.Len(); n > w.l.MaxStringBytes && at.name != "PictureUri" {
			w.err = Refuse(StringBytes, "%s: a string of %d bytes is longer than the limit of %d bytes (%s)", at, n, w.l.MaxStringBytes, StringBytes)
		}
	}
}

func (w *walker) structure(v reflect.Value, at *step) {
	switch v.Type() {
	case typePointN:
		w.vertices++
		if w.vertices > w.l.MaxVertices {
			w.err = Refuse(Vertices, "%s: more than %d vertices in the request's geometries; the limit is %d (%s)", at, w.l.MaxVertices, w.l.MaxVertices, Vertices)
		}
		return
	case typeImageDisplay:
		d := v.Interface().(gisxml.ImageDisplay)
		if w.err = w.imageSize(&d, at); w.err != nil {
			return
		}
		if w.err = w.dpi(d.ImageDPI, &step{up: at, name: "ImageDPI"}); w.err != nil {
			return
		}
	case typeCenterAndScale:
		if dpi := v.Interface().(gisxml.CenterAndScale).DPI; dpi != nil {
			if w.err = w.dpi(*dpi, &step{up: at, name: "DPI"}); w.err != nil {
				return
			}
		}
	}
	t := v.Type()
	for i := 0; i < t.NumField() && w.err == nil; i++ {
		f := t.Field(i)
		if f.Anonymous {
			w.value(v.Field(i), at)
			continue
		}
		tag, ok := f.Tag.Lookup("gis")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		w.value(v.Field(i), &step{up: at, name: name})
	}
}

func (w *walker) imageSize(d *gisxml.ImageDisplay, at *step) error {
	limit := ImageWidth
	if d.ImageWidth <= w.l.MaxImageWidth {
		if d.ImageHeight <= w.l.MaxImageHeight {
			return nil
		}
		limit = ImageHeight
	}
	return Refuse(limit, "%s: %d×%d pixels is larger than the limit of %d×%d (%s, %s)", at, d.ImageWidth, d.ImageHeight,
		w.l.MaxImageWidth, w.l.MaxImageHeight, ImageWidth, ImageHeight)
}

func (w *walker) dpi(dpi float64, at *step) error {
	if dpi == 0 || (dpi >= 1 && dpi <= w.l.MaxImageDPI) {
		return nil
	}
	return Refuse(ImageDPI, "%s %g is out of range: the limit is 1 to %g DPI, 0 meaning 96 (%s)", at, dpi, w.l.MaxImageDPI, ImageDPI)
}
