package servicedef

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/symbology"
	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree, turning nodes into values and collecting
// every problem with its position instead of stopping at the first.
type decoder struct {
	file  string
	probs []Problem
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	p := Problem{File: d.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

func (d *decoder) sorted() []Problem {
	sort.SliceStable(d.probs, func(i, j int) bool {
		a, b := d.probs[i], d.probs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return d.probs
}

// resolve follows aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// pair is one key/value of a mapping.
type pair struct{ key, val *yaml.Node }

// pairs returns the key/value pairs of a mapping, with YAML merge keys
// (`<<: *anchor`) expanded: explicit keys override merged ones. Duplicate
// explicit keys are reported.
func (d *decoder) pairs(n *yaml.Node) []pair {
	n = resolve(n)
	var own, merged []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			v = resolve(v)
			var srcs []*yaml.Node
			if v.Kind == yaml.SequenceNode {
				srcs = v.Content
			} else {
				srcs = []*yaml.Node{v}
			}
			for _, s := range srcs {
				s = resolve(s)
				if s.Kind != yaml.MappingNode {
					d.errorf(s, "merge key value must be a mapping")
					continue
				}
				merged = append(merged, d.pairs(s)...)
			}
			continue
		}
		if seen[k.Value] {
			d.errorf(k, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		own = append(own, pair{k, v})
	}
	out := own
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			out = append(out, p)
		}
	}
	return out
}

// fields decodes a mapping: each known key calls its handler with the value
// node; unknown keys are problems (with a suggestion for near misses). It
// returns false when n is not a mapping.
func (d *decoder) fields(n *yaml.Node, what string, handlers map[string]func(v *yaml.Node)) bool {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping", what)
		return false
	}
	for _, p := range d.pairs(n) {
		h, ok := handlers[p.key.Value]
		if !ok {
			d.errorf(p.key, "unknown key %q in %s%s", p.key.Value, what, suggest(p.key.Value, handlers))
			continue
		}
		h(p.val)
	}
	return true
}

func suggest(key string, handlers map[string]func(*yaml.Node)) string {
	best, bestD := "", 3
	lk := strings.ToLower(key)
	for k := range handlers {
		if dist := editDistance(lk, strings.ToLower(k)); dist < bestD || (dist == bestD && k < best && best != "") {
			best, bestD = k, dist
		}
	}
	if best == "" {
		keys := make([]string, 0, len(handlers))
		for k := range handlers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return " (known keys: " + strings.Join(keys, ", ") + ")"
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (d *decoder) scalar(n *yaml.Node, what string) (*yaml.Node, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be a scalar value", what)
		return nil, false
	}
	return n, true
}

func (d *decoder) str(n *yaml.Node, what string) string {
	s, ok := d.scalar(n, what)
	if !ok || s.Tag == "!!null" {
		return ""
	}
	return s.Value
}

func (d *decoder) int(n *yaml.Node, what string) int {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(s.Value, 0, 32)
	if err != nil || s.Tag != "!!int" {
		d.errorf(s, "%s must be an integer, not %q", what, s.Value)
		return 0
	}
	return int(v)
}

func (d *decoder) float(n *yaml.Node, what string) float64 {
	s, ok := d.scalar(n, what)
	if !ok {
		return 0
	}
	if s.Tag != "!!int" && s.Tag != "!!float" {
		d.errorf(s, "%s must be a number, not %q", what, s.Value)
		return 0
	}
	var v float64
	if err := s.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(s, "%s must be a finite number, not %q", what, s.Value)
		return 0
	}
	return v
}

// nonNeg decodes a number that must be ≥ 0.
func (d *decoder) nonNeg(n *yaml.Node, what string) float64 {
	v := d.float(n, what)
	if v < 0 {
		d.errorf(resolve(n), "%s must not be negative", what)
		return 0
	}
	return v
}

func (d *decoder) bool(n *yaml.Node, what string) bool {
	s, ok := d.scalar(n, what)
	if !ok {
		return false
	}
	if s.Tag != "!!bool" {
		d.errorf(s, "%s must be true or false, not %q", what, s.Value)
		return false
	}
	return s.Value == "true" || s.Value == "True" || s.Value == "TRUE"
}

// seq calls fn for every item of a sequence.
func (d *decoder) seq(n *yaml.Node, what string, fn func(item *yaml.Node)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list", what)
		return
	}
	for _, it := range n.Content {
		fn(it)
	}
}

// color decodes [r,g,b], [r,g,b,a] or "#rrggbb"/"#rrggbbaa".
func (d *decoder) color(n *yaml.Node, what string) symbology.Color {
	n = resolve(n)
	switch {
	case n != nil && n.Kind == yaml.SequenceNode:
		if len(n.Content) != 3 && len(n.Content) != 4 {
			d.errorf(n, "%s must have 3 or 4 components [r, g, b(, a)], not %d", what, len(n.Content))
			return symbology.Color{A: 255}
		}
		c := [4]uint8{3: 255}
		for i, it := range n.Content {
			it = resolve(it)
			v, err := strconv.Atoi(it.Value)
			if it.Kind != yaml.ScalarNode || it.Tag != "!!int" || err != nil || v < 0 || v > 255 {
				d.errorf(it, "%s component must be an integer 0–255, not %q", what, it.Value)
				continue
			}
			c[i] = uint8(v)
		}
		return symbology.Color{R: c[0], G: c[1], B: c[2], A: c[3]}
	case n != nil && n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, "#"):
		h := n.Value[1:]
		if len(h) == 6 || len(h) == 8 {
			if v, err := strconv.ParseUint(h, 16, 32); err == nil {
				if len(h) == 6 {
					return symbology.Color{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
				}
				return symbology.Color{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}
			}
		}
		d.errorf(n, "%s %q is not a colour: want \"#rrggbb\" or \"#rrggbbaa\"", what, n.Value)
	default:
		v := ""
		if n != nil {
			v = n.Value
		}
		d.errorf(n, "%s must be [r, g, b], [r, g, b, a] or \"#rrggbb\", not %q", what, v)
	}
	return symbology.Color{A: 255}
}
