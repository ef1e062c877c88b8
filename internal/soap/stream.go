package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mapfarm/mapfarm/internal/limits"
)

// Limits bound what the reader accepts from one message. The zero value means the defaults.
type Limits struct {
	// MaxDepth is the deepest element nesting accepted. Default 64.
	MaxDepth int
	// MaxElements is the most elements in one message. Default 1,000,000.
	MaxElements int
	// MaxDecodedBytes bounds the memory the decoded values of one request take (Go structs,
	// slices and strings, counted as they are allocated). Default 10 MiB. Responses read by
	// the client are not bounded by it.
	MaxDecodedBytes int64
}

// Default limits (docs/limits.md has the reasoning).
const (
	DefaultMaxDepth        = 64
	DefaultMaxElements     = 1_000_000
	DefaultMaxDecodedBytes = 10 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxElements <= 0 {
		l.MaxElements = DefaultMaxElements
	}
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	return l
}

// limitFault is the soap:Client fault of a message over one of the reader's limits; its Err is
// the *limits.Error, so that the front end counts the refusal by limit.
func limitFault(limit limits.Name, msg string) *Fault {
	return &Fault{Code: FaultClient, String: msg, Err: &limits.Error{Limit: limit, Msg: msg}}
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// element is the start of one element as the codec needs it: the local name, the namespace,
// xsi:type and xsi:nil.
type element struct {
	local   string
	space   string
	xsiType string // local part of xsi:type, whatever its prefix ("" when absent)
	nil     bool
}

// reader streams one XML document token by token, so that memory follows the decoded values,
// not the document: no tree is built. It refuses DTDs (so no entity tricks reach the codec),
// and enforces the depth, element and decoded-size limits. Its errors are *Fault values;
// syntax and limit errors are sticky: once one happened, every call returns it.
type reader struct {
	d      *xml.Decoder
	lim    Limits
	depth  int // elements open
	count  int // elements seen
	budget int64
	rooted bool // the document element has started
	err    *Fault
	text   bytes.Buffer
}

func newReader(r io.Reader, lim Limits) *reader {
	d := xml.NewDecoder(r)
	d.Strict = true
	lim = lim.withDefaults()
	return &reader{d: d, lim: lim, budget: lim.MaxDecodedBytes}
}

func (r *reader) fail(f *Fault) *Fault {
	if r.err == nil {
		r.err = f
	}
	return r.err
}

func malformed(msg string, err error) *Fault {
	return &Fault{Code: FaultClient, String: "malformed XML: " + msg, Err: err}
}

// next returns the next start element, end element or character data (the rest are passed
// over), or io.EOF at a well-formed end of the document. The CharData it returns is valid only
// until the next call.
func (r *reader) next() (xml.Token, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		tok, err := r.d.Token()
		if errors.Is(err, io.EOF) {
			switch {
			case !r.rooted:
				return nil, r.fail(malformed("empty document", nil))
			case r.depth != 0:
				return nil, r.fail(malformed("unexpected end of document", nil))
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, r.fail(malformed(err.Error(), err))
		}
		switch tok.(type) {
		case xml.Directive:
			return nil, r.fail(malformed("DTDs and entity declarations are not accepted", nil))
		case xml.StartElement:
			r.count++
			if r.count > r.lim.MaxElements {
				return nil, r.fail(limitFault(limits.Elements,
					fmt.Sprintf("message too large: more than %d elements; the limit is %d (%s)", r.lim.MaxElements, r.lim.MaxElements, limits.Elements)))
			}
			if r.depth >= r.lim.MaxDepth {
				return nil, r.fail(limitFault(limits.Depth,
					fmt.Sprintf("message nested too deeply: more than %d levels; the limit is %d (%s)", r.lim.MaxDepth, r.lim.MaxDepth, limits.Depth)))
			}
			if r.depth == 0 {
				if r.rooted {
					return nil, r.fail(malformed("more than one root element", nil))
				}
				r.rooted = true
			}
			r.depth++
			return tok, nil // tok, not t: boxing t again would allocate
		case xml.EndElement:
			r.depth--
			return tok, nil
		case xml.CharData:
			if r.depth > 0 {
				return tok, nil
			}
		}
	}
}

// start reads the document element.
func (r *reader) start() (element, error) {
	for {
		tok, err := r.next()
		if errors.Is(err, io.EOF) {
			return element{}, r.fail(malformed("empty document", nil))
		}
		if err != nil {
			return element{}, err
		}
		if s, ok := tok.(xml.StartElement); ok {
			return elementOf(s), nil
		}
	}
}

func elementOf(s xml.StartElement) element {
	el := element{local: s.Name.Local, space: s.Name.Space}
	for _, a := range s.Attr {
		if !isXSIAttr(a.Name) {
			continue
		}
		switch a.Name.Local {
		case "type":
			v := strings.TrimSpace(a.Value)
			if i := strings.IndexByte(v, ':'); i >= 0 {
				v = v[i+1:]
			}
			el.xsiType = v
		case "nil":
			el.nil = a.Value == "true" || a.Value == "1"
		}
	}
	return el
}

// child reads on within the current element to its next child element, passing character
// data over. At the current element's end, which it consumes, it returns ok false.
func (r *reader) child() (el element, ok bool, err error) {
	for {
		tok, err := r.next()
		if err != nil {
			return element{}, false, r.unexpectedEOF(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return elementOf(t), true, nil
		case xml.EndElement:
			return element{}, false, nil
		}
	}
}

// skip reads past the end of the current element, whatever it holds.
func (r *reader) skip() error {
	for depth := 1; depth > 0; {
		tok, err := r.next()
		if err != nil {
			return r.unexpectedEOF(err)
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// content reads the current element to its end and returns its character data, with ok
// false when the element holds child elements (they are passed over; the DOM-less reading of
// "an element with children has no text").
func (r *reader) content() (text string, ok bool, err error) {
	r.text.Reset()
	children := false
	for depth := 1; depth > 0; {
		tok, err := r.next()
		if err != nil {
			return "", false, r.unexpectedEOF(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			children = true
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 1 && !children {
				r.text.Write(t)
			}
		}
	}
	if children {
		return "", false, nil
	}
	return r.text.String(), true, nil
}

func (r *reader) unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return r.fail(malformed("unexpected end of document", nil))
	}
	return err
}

// charge counts n bytes of decoded values against the message's budget.
func (r *reader) charge(n int64) error {
	r.budget -= n
	if r.budget < 0 {
		return r.fail(limitFault(limits.DecodedBytes,
			fmt.Sprintf("message too large: its values take more than %d bytes decoded; the limit is %d (%s)", r.lim.MaxDecodedBytes, r.lim.MaxDecodedBytes, limits.DecodedBytes)))
	}
	return nil
}

// finish reads the rest of the document, checking it as the part already read. It returns
// the document's first syntax or limit error, or nil when it is well-formed to its end: such an
// error outranks an error in the values read before it.
func (r *reader) finish() error {
	for {
		_, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// settle returns the error a read that stopped with err reports: the document's own syntax or
// limit error if it has one, else err.
func (r *reader) settle(err error) error {
	if ferr := r.finish(); ferr != nil {
		return ferr
	}
	return err
}

// isXSIAttr reports whether an attribute is xsi:type or xsi:nil: its prefix is bound to the
// XML Schema instance namespace, or is the conventional "xsi" left undeclared by a sloppy client.
func isXSIAttr(n xml.Name) bool {
	if n.Local != "type" && n.Local != "nil" {
		return false
	}
	switch n.Space {
	case xsiNS, "xsi":
		return true
	}
	return false
}
