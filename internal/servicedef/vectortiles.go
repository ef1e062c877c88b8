package servicedef

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxVectorZoom is the largest zoom a layer's VectorTiles.MinZoom may name (the largest zoom a
// vector tile style names).
const MaxVectorZoom = 24

// VectorTiles holds a layer's choices for vector tiles (the layer's `vectorTiles` mapping, every
// key optional). Which features go into a tile follows the layer as the raster map draws it: its
// definition expression and its scale range (a tile at zoom z shows at scales from
// 295,828,763.8 / 2^z down to half of it, and holds the layers visible somewhere in between),
// then MinZoom.
type VectorTiles struct {
	// Include (`include`, default: the layer's `visible`) puts the layer in vector tiles when
	// true, leaves it out when false; nil: the layer's Visible decides (InVectorTiles). A layer
	// hidden by default is left out, as ArcGIS Pro leaves hidden layers out of a vector tile
	// package; `include: true` keeps it (its style layers then say `visibility: none`).
	Include *bool
	// Fields (`fields`, default: the display field) are the attributes written with each
	// feature: published fields, by name. The fields the layer's renderer and label classes read
	// are added when published (the style reads them; TileFields). The object ID is every
	// feature's id in the tile, not an attribute, unless listed here.
	Fields []string
	// MinZoom (`minZoom`, default 0, at most MaxVectorZoom) is the first zoom whose tiles hold the
	// layer (Web Mercator zoom, 512-pixel tiles as ArcGIS's vector tile levels): dense layers
	// left out of the small scales.
	MinZoom int
}

// vectorTiles decodes a layer's `vectorTiles` mapping (n nil: the defaults) and returns the nodes
// of the fields it names, to check against the published fields once they are known.
func (l *loader) vectorTiles(n *yaml.Node, ly *Layer) []fieldRef {
	if n == nil || isNull(n) {
		return nil
	}
	var refs []fieldRef
	vt := &ly.VectorTiles
	l.fields(n, "vectorTiles", map[string]func(*yaml.Node){
		"include": func(v *yaml.Node) { b := l.bool(v, "vectorTiles.include"); vt.Include = &b },
		"minZoom": func(v *yaml.Node) {
			vt.MinZoom = l.int(v, "vectorTiles.minZoom")
			if vt.MinZoom < 0 || vt.MinZoom > MaxVectorZoom {
				l.errorf(resolve(v), "vectorTiles.minZoom %d: want 0 to %d", vt.MinZoom, MaxVectorZoom)
				vt.MinZoom = 0
			}
		},
		"fields": func(v *yaml.Node) {
			vt.Fields = []string{}
			seen := map[string]bool{}
			l.seq(v, "vectorTiles.fields", func(it *yaml.Node) {
				name := l.str(it, "vectorTiles field")
				if name == "" {
					l.errorf(resolve(it), "vectorTiles field name must not be empty")
					return
				}
				if seen[strings.ToLower(name)] {
					l.errorf(resolve(it), "vectorTiles field %q listed twice", name)
					return
				}
				seen[strings.ToLower(name)] = true
				vt.Fields = append(vt.Fields, name)
				refs = append(refs, fieldRef{name: name, at: it, what: "vectorTiles field"})
			})
		},
	})
	return refs
}

// checkTileFields checks that the layer's vectorTiles fields are published fields and writes
// them as published.
func (l *loader) checkTileFields(ly *Layer, refs []fieldRef) {
	for i, r := range refs {
		f, ok := published(ly, r.name)
		if !ok {
			l.errorf(resolve(r.at), "%s %q is not a published field of layer %q (fields: %s)", r.what, r.name, ly.Name, fieldNames(ly.Fields))
			continue
		}
		ly.VectorTiles.Fields[i] = f
	}
}

// published returns the published field named name (any letter case) as published.
func published(ly *Layer, name string) (string, bool) {
	for _, f := range ly.Fields {
		if strings.EqualFold(f.Name, name) {
			return f.Name, true
		}
	}
	return "", false
}

func fieldNames(fs []Field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// InVectorTiles reports whether the layer goes into vector tiles: VectorTiles.Include, else its
// default visibility.
func (ly *Layer) InVectorTiles() bool {
	if ly.VectorTiles.Include != nil {
		return *ly.VectorTiles.Include
	}
	return ly.Visible
}

// TileFields returns the attributes the layer's vector tiles carry, each once, as published:
// VectorTiles.Fields (the display field when not set), then the published fields its renderer
// and label classes read, which the layer's style needs to draw and label it as the raster map
// does. A field that is not published never goes into a tile.
func (ly *Layer) TileFields() []string {
	var out []string
	add := func(name string) {
		if name == "" {
			return
		}
		f, ok := published(ly, name)
		if !ok {
			return
		}
		for _, o := range out {
			if o == f {
				return
			}
		}
		out = append(out, f)
	}
	if ly.VectorTiles.Fields != nil {
		for _, f := range ly.VectorTiles.Fields {
			add(f)
		}
	} else {
		add(ly.DisplayField)
	}
	for _, f := range ly.Renderer.Fields {
		add(f)
	}
	add(ly.Renderer.Field)
	for _, lb := range ly.Labels {
		add(lb.Field)
		for _, p := range lb.Text {
			add(p.Field)
		}
	}
	return out
}
