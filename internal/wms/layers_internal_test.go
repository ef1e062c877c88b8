package wms

import (
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/kvp"
)

// A group layer nests its sublayers; naming a sublayer draws it and its group, naming the group
// draws its sublayers, naming the root draws the default visibility; a group is queryable when
// a sublayer is.
func TestLayerTreeGroups(t *testing.T) {
	info := &gisxml.MapServerInfo{Name: "Layers",
		MapLayerInfos: gisxml.ArrayOfMapLayerInfo{
			{LayerID: 0, Name: "Group", ParentLayerID: -1, SubLayerIDs: gisxml.ArrayOfInt{1, 2}},
			{LayerID: 1, Name: "A", ParentLayerID: 0, IsFeatureLayer: true, CanIdentify: true},
			{LayerID: 2, Name: "B", ParentLayerID: 0, IsFeatureLayer: true},
			{LayerID: 3, Name: "C", ParentLayerID: -1, IsFeatureLayer: true},
		},
		DefaultMapDescription: &gisxml.MapDescription{LayerDescriptions: gisxml.ArrayOfLayerDescription{
			{LayerID: 0, Visible: true}, {LayerID: 1, Visible: true}, {LayerID: 2, Visible: false}, {LayerID: 3, Visible: true}}},
	}
	tree := newLayerTree(&catalog.Service{Name: "svc"}, info)
	if len(tree.roots) != 2 || len(tree.roots[0].children) != 2 || tree.roots[0].children[1].info.Name != "B" {
		t.Fatalf("tree: %d roots", len(tree.roots))
	}
	if !tree.roots[0].queryable() || tree.byID[2].queryable() || tree.roots[1].queryable() {
		t.Error("queryable flags")
	}
	for layers, want := range map[string]string{"1": "0,1", "0": "0,1,2", "svc": "0,1,3", "3,2": "0,2,3"} {
		vis, exc := tree.readLayers(kvp.Params{"layers": layers})
		if exc != nil {
			t.Fatalf("%s: %v", layers, exc)
		}
		got := ""
		for id := range 4 {
			if vis[id] {
				if got != "" {
					got += ","
				}
				got += string(rune('0' + id))
			}
		}
		if got != want {
			t.Errorf("LAYERS=%s draws %s, want %s", layers, got, want)
		}
	}
}

// GetFeatureInfo's pixel maps into the extent GetMap draws: the BBOX widened to the image's
// aspect about its centre.
func TestDrawnExtent(t *testing.T) {
	if x0, y0, x1, y1 := drawnExtent([4]float64{0, 0, 10, 10}, 200, 100); x0 != -5 || x1 != 15 || y0 != 0 || y1 != 10 {
		t.Errorf("wide image: %v %v %v %v", x0, y0, x1, y1)
	}
	if x0, y0, x1, y1 := drawnExtent([4]float64{0, 0, 10, 10}, 100, 200); x0 != 0 || x1 != 10 || y0 != -5 || y1 != 15 {
		t.Errorf("tall image: %v %v %v %v", x0, y0, x1, y1)
	}
}
