package soap

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits bound what the reader accepts from one request. The zero value means the defaults.
type Limits struct {
	// MaxDepth is the deepest element nesting accepted. Default 64.
	MaxDepth int
	// MaxElements is the most elements in one message. Default 2,000,000 (a polygon of about a
	// million vertices).
	MaxElements int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = 64
	}
	if l.MaxElements <= 0 {
		l.MaxElements = 2_000_000
	}
	return l
}

// node is one element of a parsed message. Only what the codec needs is kept: the local name,
// xsi:type and xsi:nil, the character data and the children.
type node struct {
	local    string
	space    string
	xsiType  string // local part of xsi:type ("" when absent)
	xsiTypeP string // prefix of xsi:type as written
	nil      bool
	text     string
	children []*node
}

func (n *node) child(local string) *node {
	for _, c := range n.children {
		if c.local == local {
			return c
		}
	}
	return nil
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// parse reads one XML document into a tree. It refuses DTDs (so no entity tricks reach the
// codec), and enforces the depth and element limits.
func parse(r io.Reader, lim Limits) (*node, error) {
	lim = lim.withDefaults()
	d := xml.NewDecoder(r)
	d.Strict = true
	var (
		stack []*node
		root  *node
		count int
		text  bytes.Buffer
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Fault{Code: FaultClient, String: "malformed XML: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, &Fault{Code: FaultClient, String: "malformed XML: DTDs and entity declarations are not accepted"}
		case xml.StartElement:
			count++
			if count > lim.MaxElements {
				return nil, &Fault{Code: FaultClient, String: fmt.Sprintf("message too large: more than %d elements", lim.MaxElements)}
			}
			if len(stack) >= lim.MaxDepth {
				return nil, &Fault{Code: FaultClient, String: fmt.Sprintf("message nested too deeply: more than %d levels", lim.MaxDepth)}
			}
			n := &node{local: t.Name.Local, space: t.Name.Space}
			for _, a := range t.Attr {
				if !isXSIAttr(a.Name) {
					continue
				}
				switch a.Name.Local {
				case "type":
					v := strings.TrimSpace(a.Value)
					if i := strings.IndexByte(v, ':'); i >= 0 {
						n.xsiTypeP, n.xsiType = v[:i], v[i+1:]
					} else {
						n.xsiType = v
					}
				case "nil":
					n.nil = a.Value == "true" || a.Value == "1"
				}
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root != nil {
				return nil, &Fault{Code: FaultClient, String: "malformed XML: more than one root element"}
			} else {
				root = n
			}
			stack = append(stack, n)
			text.Reset()
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, &Fault{Code: FaultClient, String: "malformed XML: unexpected end element"}
			}
			n := stack[len(stack)-1]
			if len(n.children) == 0 {
				n.text = text.String()
			}
			text.Reset()
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, &Fault{Code: FaultClient, String: "malformed XML: empty document"}
	}
	if len(stack) != 0 {
		return nil, &Fault{Code: FaultClient, String: "malformed XML: unexpected end of document"}
	}
	return root, nil
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
