package wms

import (
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/kvp"
)

// layerTree is the service's layers as WMS names them: the root layer is the map, named after
// the service; each map layer is named by its layer id, as ArcGIS Server's WMS names them, with
// its name as the title; a group layer's sublayers are nested in it.
type layerTree struct {
	name, title string
	roots       []*layerNode
	byID        map[int]*layerNode
	defaults    map[int]bool // the default visibility
}

type layerNode struct {
	info     *gisxml.MapLayerInfo
	parent   *layerNode
	children []*layerNode
}

func (n *layerNode) name() string { return strconv.Itoa(n.info.LayerID) }

func newLayerTree(svc *catalog.Service, info *gisxml.MapServerInfo) *layerTree {
	t := &layerTree{name: svc.Name, title: info.Name, byID: make(map[int]*layerNode, len(info.MapLayerInfos)), defaults: map[int]bool{}}
	if md := info.DefaultMapDescription; md != nil {
		for _, ld := range md.LayerDescriptions {
			t.defaults[ld.LayerID] = ld.Visible
		}
	}
	for _, l := range info.MapLayerInfos {
		t.byID[l.LayerID] = &layerNode{info: l}
	}
	for _, l := range info.MapLayerInfos {
		n := t.byID[l.LayerID]
		if p, ok := t.byID[l.ParentLayerID]; ok && l.ParentLayerID >= 0 && p != n && isParent(p, l.LayerID) {
			n.parent = p
			p.children = append(p.children, n)
		} else {
			t.roots = append(t.roots, n)
		}
	}
	return t
}

// isParent reports whether p lists id among its sublayers (GetServerInfo writes ParentLayerID
// -1, or 0 in older messages, for a top-level layer, so the parent's list decides).
func isParent(p *layerNode, id int) bool {
	for _, s := range p.info.SubLayerIDs {
		if s == id {
			return true
		}
	}
	return false
}

// lookup finds a layer by its WMS name; the root layer is nil, true.
func (t *layerTree) lookup(name string) (*layerNode, bool) {
	name = strings.TrimSpace(name)
	if strings.EqualFold(name, t.name) {
		return nil, true
	}
	id, err := strconv.Atoi(name)
	if err != nil {
		return nil, false
	}
	n, ok := t.byID[id]
	return n, ok
}

// readLayers reads LAYERS and STYLES into the layers to draw: a named layer with its
// ancestors (a sublayer draws only in a visible group) and, for a group, its sublayers; the
// root layer draws the map's default visibility. STYLES may be absent or empty, or name the
// style "default" (or "") for each layer.
func (t *layerTree) readLayers(p kvp.Params) (map[int]bool, *Exception) {
	ls := p.Get("LAYERS")
	if strings.TrimSpace(ls) == "" {
		return nil, missing("LAYERS", "LAYERS is required: the names of the layers to draw, from the capabilities")
	}
	names := strings.Split(ls, ",")
	if st := p.Get("STYLES"); strings.Trim(st, ", ") != "" {
		styles := strings.Split(st, ",")
		if len(styles) != len(names) {
			return nil, &Exception{Code: "StyleNotDefined", Locator: "styles", Message: "STYLES must name one style per layer of LAYERS (or be empty)"}
		}
		for _, s := range styles {
			if s = strings.TrimSpace(s); s != "" && !strings.EqualFold(s, "default") {
				return nil, &Exception{Code: "StyleNotDefined", Locator: "styles", Message: "style " + quoted(s) + " is not defined: each layer has the style \"default\""}
			}
		}
	}
	vis := map[int]bool{}
	for _, name := range names {
		n, ok := t.lookup(name)
		if !ok {
			return nil, &Exception{Code: "LayerNotDefined", Locator: "layers", Message: "layer " + quoted(name) + " is not defined"}
		}
		if n == nil {
			for id, v := range t.defaults {
				vis[id] = vis[id] || v
			}
			continue
		}
		for a := n.parent; a != nil; a = a.parent {
			vis[a.info.LayerID] = true
		}
		n.walk(func(d *layerNode) { vis[d.info.LayerID] = true })
	}
	return vis, nil
}

// walk calls fn on n and its descendants.
func (n *layerNode) walk(fn func(*layerNode)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// all calls fn on every layer.
func (t *layerTree) all(fn func(*layerNode)) {
	for _, r := range t.roots {
		r.walk(fn)
	}
}

// queryable reports whether Identify answers for the layer: a feature layer that can be
// identified, or a group with such a sublayer.
func (n *layerNode) queryable() bool {
	if n.info.IsFeatureLayer && n.info.CanIdentify {
		return true
	}
	for _, c := range n.children {
		if c.queryable() {
			return true
		}
	}
	return false
}
