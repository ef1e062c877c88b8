package soap_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/soap"
)

// xsdNode is a generic element of a schema document.
type xsdNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xsdNode  `xml:",any"`
}

func (n *xsdNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// shape is what the wire depends on: per complex type its base and its own elements in order
// with their type and occurrence; per enumeration its values; per operation element its children.
type shape map[string][]string

func collect(n *xsdNode, out []string) []string {
	switch n.XMLName.Local {
	case "element":
		occ := n.attr("minOccurs") + "/" + n.attr("maxOccurs")
		out = append(out, n.attr("name")+":"+localType(n.attr("type"))+":"+occ)
		return out
	case "extension":
		out = append(out, "extends "+localType(n.attr("base")))
	case "enumeration":
		out = append(out, n.attr("value"))
	}
	for i := range n.Children {
		out = collect(&n.Children[i], out)
	}
	return out
}

func localType(t string) string {
	if i := strings.IndexByte(t, ':'); i >= 0 {
		if t[:i] == "xs" {
			return t
		}
		return t[i+1:]
	}
	return t
}

func shapes(t *testing.T, wsdl []byte) shape {
	t.Helper()
	var root xsdNode
	if err := xml.Unmarshal(wsdl, &root); err != nil {
		t.Fatal(err)
	}
	out := shape{}
	var walk func(n *xsdNode, top bool)
	walk = func(n *xsdNode, top bool) {
		switch n.XMLName.Local {
		case "schema":
			for i := range n.Children {
				c := &n.Children[i]
				switch c.XMLName.Local {
				case "complexType", "simpleType":
					out["type "+c.attr("name")] = collect(c, nil)
				case "element":
					var kids []string
					for j := range c.Children {
						kids = collect(&c.Children[j], kids)
					}
					out["element "+c.attr("name")] = kids
				}
			}
			return
		}
		for i := range n.Children {
			walk(&n.Children[i], false)
		}
	}
	walk(&root, true)
	return out
}

// intentionalDiffs are the definitions where mapfarm's WSDL departs from the reference on
// purpose, with both shapes. The reference declares ArrayOfLayerCacheInfo's one element
// without maxOccurs, so exactly once: a slip in Esri's schema for an array that ArcGIS fills
// with one element per layer, as mapfarm does; mapfarm's WSDL declares the element repeating
// (docs/tile-caches.md).
var intentionalDiffs = map[string][2]string{
	"type ArrayOfLayerCacheInfo": {"LayerCacheInfo:LayerCacheInfo:/", "LayerCacheInfo:LayerCacheInfo:0/unbounded"},
}

// TestWSDLMatchesReference compares the WSDL written from the Go types with ArcGIS's 10.7
// MapServer WSDL (prefix and namespace rewritten): every type and operation element of the
// reference must exist with the same fields in the same order, the same types and occurrences,
// and every enumeration with the same values, except for intentionalDiffs, which must differ
// exactly as listed.
func TestWSDLMatchesReference(t *testing.T) {
	ref, err := os.ReadFile("../../e2e/testdata/reference-MapServer-10.7.wsdl")
	if err != nil {
		t.Fatal(err)
	}
	ref = bytes.ReplaceAll(ref, []byte("{{NAMESPACE}}"), []byte(ns))
	var ours bytes.Buffer
	newCodec().WriteWSDL(&ours, soap.WSDLOptions{ServiceName: "world", Address: "http://127.0.0.1/arcgis/services/world/MapServer"})
	want, got := shapes(t, ref), shapes(t, ours.Bytes())
	if len(want) < 300 {
		t.Fatalf("read only %d definitions from the reference", len(want))
	}
	var diffs []string
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			diffs = append(diffs, "missing "+name)
			continue
		}
		if d, ok := intentionalDiffs[name]; ok {
			if ref, ours := strings.Join(w, ", "), strings.Join(g, ", "); ref != d[0] || ours != d[1] {
				diffs = append(diffs, name+" (an intentional difference, but not the one listed)\n  reference: "+ref+"\n  ours:      "+ours)
			}
			continue
		}
		if !slices.Equal(w, g) {
			diffs = append(diffs, name+"\n  reference: "+strings.Join(w, ", ")+"\n  ours:      "+strings.Join(g, ", "))
		}
	}
	for name := range intentionalDiffs {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, "the reference has no "+name+" (listed as an intentional difference)")
		}
	}
	slices.Sort(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}

// TestCatalogWSDLMatchesReference compares the Catalog WSDL written from the Go types with
// ArcGIS's 10.7 Catalog WSDL (/arcgis/services?wsdl, prefix and namespace rewritten): the same
// operation elements and types, no more and no fewer, with the same fields in the same order,
// and the port, binding and service names a client built from the reference looks for.
func TestCatalogWSDLMatchesReference(t *testing.T) {
	ref, err := os.ReadFile("../../e2e/testdata/reference-Catalog-10.7.wsdl")
	if err != nil {
		t.Fatal(err)
	}
	ref = bytes.ReplaceAll(ref, []byte("{{NAMESPACE}}"), []byte(ns))
	var ours bytes.Buffer
	newCodec().WriteCatalogWSDL(&ours, "http://127.0.0.1/arcgis/services")
	want, got := shapes(t, ref), shapes(t, ours.Bytes())
	if len(want) != 19 {
		t.Fatalf("read %d definitions from the reference, want 19 (14 elements, 5 types)", len(want))
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("missing %s", name)
		} else if !slices.Equal(w, g) {
			t.Errorf("%s\n  reference: %s\n  ours:      %s", name, strings.Join(w, ", "), strings.Join(g, ", "))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is not in the reference Catalog WSDL", name)
		}
	}
	var defs struct {
		PortType struct {
			Name string `xml:"name,attr"`
			Ops  []struct {
				Name string `xml:"name,attr"`
			} `xml:"operation"`
		} `xml:"portType"`
		Binding struct {
			Name string `xml:"name,attr"`
			Type string `xml:"type,attr"`
		} `xml:"binding"`
		Service struct {
			Name string `xml:"name,attr"`
			Port struct {
				Name    string `xml:"name,attr"`
				Binding string `xml:"binding,attr"`
				Address struct {
					Location string `xml:"location,attr"`
				} `xml:"address"`
			} `xml:"port"`
		} `xml:"service"`
	}
	if err := xml.Unmarshal(ours.Bytes(), &defs); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, o := range defs.PortType.Ops {
		ops = append(ops, o.Name)
	}
	slices.Sort(ops)
	wantOps := []string{"GetFolders", "GetMessageFormats", "GetMessageVersion", "GetServiceDescriptions", "GetServiceDescriptionsEx", "GetTokenServiceURL", "RequiresTokens"}
	if defs.PortType.Name != "ServiceCatalogPort" || !slices.Equal(ops, wantOps) {
		t.Errorf("portType %q with %v, want ServiceCatalogPort with %v", defs.PortType.Name, ops, wantOps)
	}
	if b, s := defs.Binding, defs.Service; b.Name != "ServiceCatalogBinding" || b.Type != "e:ServiceCatalogPort" ||
		s.Name != "Catalog" || s.Port.Name != "ServiceCatalogPort" || s.Port.Binding != "e:ServiceCatalogBinding" ||
		s.Port.Address.Location != "http://127.0.0.1/arcgis/services" {
		t.Errorf("binding %+v, service %+v", b, s)
	}
}

// ?wsdl asks for the WSDL in any case and with any value; a key that only holds "wsdl" does not.
func TestAsksForWSDL(t *testing.T) {
	for q, want := range map[string]bool{"wsdl": true, "WSDL": true, "f=x&Wsdl=1": true, "": false, "wsdlx": false, "x=wsdl": false} {
		if got := soap.AsksForWSDL(q); got != want {
			t.Errorf("AsksForWSDL(%q) = %v, want %v", q, got, want)
		}
	}
}
