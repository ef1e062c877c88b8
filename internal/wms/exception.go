package wms

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Exception is a WMS service exception: its code (one of the standards', "" for a generic
// error), the parameter it is about, the message, and the HTTP status of the answer.
type Exception struct {
	Code    string // InvalidCRS, LayerNotDefined, …; "" for none
	Locator string // the parameter, lower case; "" for none
	Message string
	Status  int // 0: 400
	err     error
}

func (e *Exception) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

func (e *Exception) Unwrap() error { return e.err }

func invalid(msg string) *Exception { return &Exception{Message: msg} }

func missing(param, msg string) *Exception {
	return &Exception{Code: "MissingParameterValue", Locator: strings.ToLower(param), Message: msg}
}

func status(e *Exception) int {
	if e.Status == 0 {
		return http.StatusBadRequest
	}
	return e.Status
}

// codeFor is code as version v spells it: 1.1.1 names the system SRS, 1.3.0 CRS, and 1.1.1
// has no InvalidPoint nor OperationNotSupported (its exception has no code then).
func codeFor(v version, code string) string {
	switch {
	case v == version111 && code == "InvalidCRS":
		return "InvalidSRS"
	case v == version130 && code == "InvalidSRS":
		return "InvalidCRS"
	case v == version111 && (code == "InvalidPoint" || code == "OperationNotSupported" || code == "InvalidParameterValue"):
		return "" // 1.3.0's codes, not 1.1.1's
	}
	return code
}

// writeException writes e as the ServiceExceptionReport of version v: 1.3.0's in the
// http://www.opengis.net/ogc namespace as text/xml, 1.1.1's with its DOCTYPE as
// application/vnd.ogc.se_xml.
func writeException(w http.ResponseWriter, r *http.Request, v version, e *Exception) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	ct := "text/xml; charset=utf-8"
	if v == version111 {
		ct = "application/vnd.ogc.se_xml; charset=utf-8"
		b.WriteString(`<!DOCTYPE ServiceExceptionReport SYSTEM "http://schemas.opengis.net/wms/1.1.1/exception_1_1_1.dtd">` + "\n")
		b.WriteString(`<ServiceExceptionReport version="1.1.1">`)
	} else {
		b.WriteString(`<ServiceExceptionReport version="1.3.0" xmlns="http://www.opengis.net/ogc" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"` +
			` xsi:schemaLocation="http://www.opengis.net/ogc http://schemas.opengis.net/wms/1.3.0/exceptions_1_3_0.xsd">`)
	}
	b.WriteString("\n  <ServiceException")
	if c := codeFor(v, e.Code); c != "" {
		b.WriteString(` code="` + c + `"`)
	}
	if e.Locator != "" && v == version130 {
		b.WriteString(` locator="`)
		_ = xml.EscapeText(&b, []byte(e.Locator))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	_ = xml.EscapeText(&b, []byte(e.Message))
	b.WriteString("</ServiceException>\n</ServiceExceptionReport>\n")
	writeBody(w, r, status(e), ct, "no-store", b.Bytes())
}

// errNoImageException is why an exception cannot go in an image: the request's size or format
// was itself the problem, or the format is not a raster the codec writes.
var errNoImageException = errors.New("no image for the exception")

// writeImageException answers GetMap's EXCEPTIONS=INIMAGE (the message written on an image of
// the request's size and format) or BLANK (an empty image: transparent where TRANSPARENT=TRUE
// and the format has alpha, else BGCOLOR), with HTTP 200 as clients of these modes expect.
// When the request's size or format cannot make an image it writes nothing and returns an error;
// the caller answers in XML.
func writeImageException(w http.ResponseWriter, r *http.Request, q *request, e *Exception) error {
	m, err := readMapImage(q.params, 1<<14, 1<<14)
	if err != nil || m.width*m.height > 4096*4096 {
		return errNoImageException
	}
	var enc func(*bytes.Buffer, image.Image) error
	switch m.format.mime {
	case "image/png", "image/png8", "image/png24", "image/png32":
		enc = func(b *bytes.Buffer, img image.Image) error { return png.Encode(b, img) }
	case "image/jpeg":
		enc = func(b *bytes.Buffer, img image.Image) error { return jpeg.Encode(b, img, &jpeg.Options{Quality: 75}) }
	case "image/gif":
		enc = func(b *bytes.Buffer, img image.Image) error { return gif.Encode(b, img, nil) }
	default:
		return errNoImageException
	}
	img := image.NewNRGBA(image.Rect(0, 0, m.width, m.height))
	bg := color.NRGBA{m.bg[0], m.bg[1], m.bg[2], 255}
	if m.transparent && m.format.mime != "image/jpeg" {
		bg.A = 0
	}
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	if q.exceptions == excInImage {
		drawText(img, e.Error())
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		return err
	}
	writeBody(w, r, http.StatusOK, m.format.mime, "no-store", b.Bytes())
	return nil
}

// drawText writes msg in black on img, wrapped to its width, from its top left corner.
func drawText(img draw.Image, msg string) {
	face := basicfont.Face7x13
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	perLine := max(1, (img.Bounds().Dx()-8)/7)
	y := 16
	for len(msg) > 0 && y < img.Bounds().Dy() {
		n := min(len(msg), perLine)
		d.Dot = fixed.P(4, y)
		d.DrawString(msg[:n])
		msg = msg[n:]
		y += 15
	}
}

// WriteRefusal answers a request the front end refused before it reached the handler (no
// token, a token not valid for the service, over the rate limit) as a ServiceExceptionReport
// in the version the request names, with the HTTP status (401, 403, 429) beside it.
func WriteRefusal(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v := version130
	if q := r.URL.Query(); strings.HasPrefix(q.Get("VERSION")+q.Get("version"), "1.1") {
		v = version111
	}
	writeException(w, r, v, &Exception{Status: status, Message: msg})
}
