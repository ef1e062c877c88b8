package legislative

import (
	"strconv"
	"strings"
)

// renderer is one of the two renderers the API offers, in DRF's order.
type renderer int

const (
	renderJSON renderer = iota // application/json, format "json"
	renderHTML                 // text/html (browsable API), format "api"
)

var rendererTypes = [...]struct{ main, sub, format string }{
	renderJSON: {"application", "json", "json"},
	renderHTML: {"text", "html", "api"},
}

// negotiated is the outcome of content negotiation.
type negotiated struct {
	renderer renderer
	indent   int // JSON indent from "Accept: application/json; indent=N"; 0 = compact
}

// negotiation failures, answered with the JSON renderer whatever was asked.
const (
	negOK = iota
	negUnknownFormat
	negNotAcceptable
)

// mediaRange is one element of an Accept header, parsed as DRF does.
type mediaRange struct {
	main, sub string
	indent    string
	hasParams bool // any parameter other than q
}

func parseMediaRange(s string) mediaRange {
	parts := strings.Split(s, ";")
	full := strings.ToLower(strings.TrimSpace(parts[0]))
	var mr mediaRange
	mr.main, mr.sub, _ = strings.Cut(full, "/")
	for _, p := range parts[1:] {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		if name != "q" {
			mr.hasParams = true
		}
		if name == "indent" {
			mr.indent = val
		}
	}
	return mr
}

// precedence orders media ranges the way DRF does: specific with
// parameters (3), specific (2), type/* (1), */* (0). Quality values are not
// used, as in DRF.
func (m mediaRange) precedence() int {
	switch {
	case m.main == "*":
		return 0
	case m.sub == "*":
		return 1
	case !m.hasParams:
		return 2
	}
	return 3
}

func (m mediaRange) matches(r renderer) bool {
	t := rendererTypes[r]
	if m.sub != "*" && m.sub != t.sub {
		return false
	}
	return m.main == "*" || m.main == t.main
}

// negotiate picks a renderer from the ?format= value (empty = none) and the
// Accept header (hasAccept false = no header, which means */*).
func negotiate(format string, accept string, hasAccept bool) (negotiated, int) {
	candidates := []renderer{renderJSON, renderHTML}
	if format != "" {
		switch format {
		case "json":
			candidates = candidates[:1]
		case "api":
			candidates = candidates[1:]
		default:
			return negotiated{}, negUnknownFormat
		}
	}
	if !hasAccept {
		return negotiated{renderer: candidates[0]}, negOK
	}
	items := strings.Split(accept, ",")
	ranges := make([]mediaRange, len(items))
	for i, it := range items {
		ranges[i] = parseMediaRange(it)
	}
	for prec := 3; prec >= 0; prec-- {
		for _, r := range candidates {
			for _, m := range ranges {
				if m.precedence() == prec && m.matches(r) {
					return negotiated{renderer: r, indent: indentOf(m.indent)}, negOK
				}
			}
		}
	}
	return negotiated{}, negNotAcceptable
}

// indentOf mirrors DRF's JSONRenderer.get_indent: an integer clamped to
// 0..8, where 0 (or anything unparsable) means compact.
func indentOf(s string) int {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return min(max(n, 0), 8)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			if q, ok := qValue(params); ok && q == 0 {
				continue
			}
			return true
		}
	}
	return false
}

func qValue(params string) (float64, bool) {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// etagMatch reports whether an If-None-Match header matches tag, using the
// weak comparison RFC 9110 prescribes for If-None-Match.
func etagMatch(header []string, tag string) bool {
	opaque := strings.TrimPrefix(tag, "W/")
	for _, h := range header {
		for _, t := range strings.Split(h, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == opaque {
				return true
			}
		}
	}
	return false
}
