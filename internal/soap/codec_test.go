package soap_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
)

const ns = "http://schemas.mapfarm.dev/gis/10.7"

func newCodec() *soap.Codec { return soap.NewCodec(ns, soap.Limits{}) }

func envelope(body string) string {
	return `<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:g="` + ns + `"><s:Body>` + body + `</s:Body></s:Envelope>`
}

// An Esri-style hand-written request: no xsi:type anywhere, required elements left out.
func TestReadRequestUntyped(t *testing.T) {
	req, err := newCodec().ReadRequest(strings.NewReader(envelope(`<g:ExportMapImage>
	  <MapDescription><Name>Layers</Name><MapArea><Extent><XMin>-10</XMin><YMin>-5</YMin><XMax>10</XMax><YMax>5</YMax></Extent></MapArea>
	    <LayerDescriptions><LayerDescription><LayerID>2</LayerID><Visible>true</Visible><DefinitionExpression>POP &gt; 5</DefinitionExpression></LayerDescription></LayerDescriptions>
	  </MapDescription>
	  <ImageDescription><ImageType><ImageFormat>esriImagePNG</ImageFormat><ImageReturnType>gisImageReturnMimeData</ImageReturnType></ImageType>
	    <ImageDisplay><ImageHeight>300</ImageHeight><ImageWidth>400</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription>
	</g:ExportMapImage>`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Operation != "ExportMapImage" {
		t.Fatalf("operation %q", req.Operation)
	}
	body := req.Body.(*gisxml.ExportMapImage)
	ext, ok := body.MapDescription.MapArea.(*gisxml.MapExtent)
	if !ok {
		t.Fatalf("untyped MapArea read as %T, want *MapExtent", body.MapDescription.MapArea)
	}
	env := ext.Extent.(*gisxml.EnvelopeN)
	if env.XMin != -10 || env.YMax != 5 {
		t.Fatalf("extent %+v", env)
	}
	ld := body.MapDescription.LayerDescriptions[0]
	if ld.LayerID != 2 || !ld.Visible || ld.DefinitionExpression != "POP > 5" {
		t.Fatalf("layer description %+v", ld)
	}
	it := body.ImageDescription.ImageType
	if it.ImageFormat != gisxml.ImagePNG || it.ImageReturnType != gisxml.ImageReturnMimeData {
		t.Fatalf("image type %+v (esri prefix must read as gis)", it)
	}
	if d := body.ImageDescription.ImageDisplay; d.ImageWidth != 400 || d.ImageHeight != 300 || d.ImageDPI != 96 {
		t.Fatalf("display %+v", d)
	}
}

func TestReadRequestTyped(t *testing.T) {
	req, err := newCodec().ReadRequest(strings.NewReader(envelope(`<g:QueryFeatureCount>
	  <MapName>Layers</MapName><LayerID>0</LayerID>
	  <QueryFilter xsi:type="g:SpatialFilter"><WhereClause>1=1</WhereClause><SpatialRel>gisSpatialRelIntersects</SpatialRel>
	     <FilterGeometry xsi:type="whatever:PolygonN"><HasID>false</HasID><HasZ>false</HasZ><HasM>false</HasM>
	        <RingArray xsi:type="g:ArrayOfRing"><Ring xsi:type="g:Ring"><PointArray><Point xsi:type="g:PointN"><X>1</X><Y>2</Y></Point><Point xsi:type="g:PointN"><X>3.5e2</X><Y>-INF</Y></Point></PointArray></Ring></RingArray>
	     </FilterGeometry></QueryFilter>
	</g:QueryFeatureCount>`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	qf := req.Body.(*gisxml.QueryFeatureCount).QueryFilter
	sf, ok := qf.(*gisxml.SpatialFilter)
	if !ok {
		t.Fatalf("QueryFilter read as %T", qf)
	}
	if sf.WhereClause != "1=1" || sf.SpatialRel != gisxml.SpatialRelIntersects {
		t.Fatalf("filter %+v", sf)
	}
	poly := sf.FilterGeometry.(*gisxml.PolygonN)
	pts := poly.RingArray[0].PointArray
	if len(pts) != 2 || pts[1].(*gisxml.PointN).X != 350 {
		t.Fatalf("points %+v", pts)
	}
}

func TestReadRequestFaults(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"malformed", `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><g:GetMapCount>`, "malformed XML"},
		{"not xml", `hello`, "malformed XML"},
		{"dtd", `<!DOCTYPE x [<!ENTITY a "b">]>` + envelope(`<GetMapCount/>`), "DTD"},
		{"unknown op", envelope(`<g:MakeCoffee/>`), `unknown operation "MakeCoffee"`},
		{"empty body", envelope(``), "Body is empty"},
		{"not envelope", `<foo/>`, "not a SOAP envelope"},
		{"bad int", envelope(`<g:GetMapName><Index>two</Index></g:GetMapName>`), `GetMapName/Index: "two" is not an xs:int`},
		{"bad enum", envelope(`<g:ExportMapImage><ImageDescription><ImageType><ImageFormat>gisImageWEBP</ImageFormat></ImageType></ImageDescription></g:ExportMapImage>`), `ExportMapImage/ImageDescription/ImageType/ImageFormat: "gisImageWEBP" is not a value of gisImageFormat`},
		{"abstract without type", envelope(`<g:Identify><SearchShape><X>1</X></SearchShape></g:Identify>`), ""},
		{"wrong derived type", envelope(`<g:ExportMapImage><MapDescription><MapArea xsi:type="g:PointN"/></MapDescription></g:ExportMapImage>`), `xsi:type "PointN" is not a MapArea`},
		{"deep", envelope(strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)), "nested too deeply"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCodec().ReadRequest(strings.NewReader(tc.doc), nil)
			if tc.want == "" {
				return // must simply not panic
			}
			var f *soap.Fault
			if !errors.As(err, &f) {
				t.Fatalf("err = %v, want a fault", err)
			}
			if f.Code != soap.FaultClient || !strings.Contains(f.String, tc.want) {
				t.Fatalf("fault %s %q, want soap:Client containing %q", f.Code, f.String, tc.want)
			}
		})
	}
}

// A response written by the codec reads back to the same values, with xsi:type on every
// complex element.
func TestWriteResponseRoundTrip(t *testing.T) {
	c := newCodec()
	alpha := uint8(255)
	resp := &gisxml.GetServerInfoResponse{Result: &gisxml.MapServerInfo{
		Name: "Layers & <more>", Description: "d",
		FullExtent: &gisxml.EnvelopeN{XMin: -180, YMin: -90, XMax: 180, YMax: 90.5,
			SpatialReference: &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(4326)}}},
		BackgroundColor: &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: &alpha}, Red: 1, Green: 2, Blue: 3},
		MapLayerInfos:   gisxml.ArrayOfMapLayerInfo{{LayerID: 0, Name: "countries", SubLayerIDs: gisxml.ArrayOfInt{}}},
		Units:           gisxml.Meters, SupportedImageReturnTypes: gisxml.ImageReturnURL,
	}}
	var b bytes.Buffer
	if err := c.WriteResponse(&b, "GetServerInfo", resp); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<tns:GetServerInfoResponse><Result xsi:type="tns:MapServerInfo"><Name>Layers &amp; &lt;more&gt;</Name>`,
		`<FullExtent xsi:type="tns:EnvelopeN"><XMin>-180</XMin>`, `<SpatialReference xsi:type="tns:GeographicCoordinateSystem"><WKID>4326</WKID></SpatialReference>`,
		`<BackgroundColor xsi:type="tns:RgbColor"><AlphaValue>255</AlphaValue><Red>1</Red>`, `<MapLayerInfos xsi:type="tns:ArrayOfMapLayerInfo"><MapLayerInfo xsi:type="tns:MapLayerInfo">`,
		`<Units>gisMeters</Units>`} {
		if !strings.Contains(out, want) {
			t.Errorf("response lacks %s\n%s", want, out)
		}
	}
}

func TestFaultEnvelope(t *testing.T) {
	var b bytes.Buffer
	newCodec().WriteFault(&b, soap.ClientFault("bad <thing>"))
	want := `<soap:Fault><faultcode>soap:Client</faultcode><faultstring>bad &lt;thing&gt;</faultstring><detail/></soap:Fault>`
	if !strings.Contains(b.String(), want) {
		t.Fatalf("fault %s", b.String())
	}
}

func ptr[T any](v T) *T { return &v }

// A request written by the client side reads back through the server side.
func TestRequestRoundTrip(t *testing.T) {
	c := newCodec()
	in := &gisxml.ExportMapImage{
		MapDescription: &gisxml.MapDescription{Name: "Layers", Rotation: 12.5,
			MapArea: &gisxml.CenterAndScale{Center: &gisxml.PointN{X: 1, Y: -2}, Scale: 5e6}},
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImageJPG, ImageReturnType: gisxml.ImageReturnURL}},
	}
	var b bytes.Buffer
	if err := c.WriteRequest(&b, "ExportMapImage", in); err != nil {
		t.Fatal(err)
	}
	req, err := c.ReadRequest(&b, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := req.Body.(*gisxml.ExportMapImage)
	cs := out.MapDescription.MapArea.(*gisxml.CenterAndScale)
	if out.MapDescription.Rotation != 12.5 || cs.Scale != 5e6 || cs.Center.(*gisxml.PointN).Y != -2 || out.ImageDescription.ImageType.ImageFormat != gisxml.ImageJPG {
		t.Fatalf("round trip lost values: %+v", out.MapDescription)
	}
	// And a fault reads back as a *Fault.
	b.Reset()
	c.WriteFault(&b, soap.ClientFault("nope"))
	var resp gisxml.ExportMapImageResponse
	err = c.ReadResponse(&b, "ExportMapImage", &resp)
	var f *soap.Fault
	if !errors.As(err, &f) || f.String != "nope" || f.Code != soap.FaultClient {
		t.Fatalf("fault read as %v", err)
	}
}

// Faults quote at most 200 characters of a request's value, never the whole input, and a
// server-side error's text (store keys, addresses) stays out of the fault.
func TestFaultsQuoteShortly(t *testing.T) {
	long := strings.Repeat("7", 7<<20)
	clipped := `"` + strings.Repeat("7", 200) + `…"`
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"7 MB int", envelope(`<g:GetMapName><Index>` + long + `</Index></g:GetMapName>`), `GetMapName/Index: ` + clipped + ` is not an xs:int`},
		{"7 MB operation name", envelope(`<g:M` + long + `/>`), `unknown operation "M` + strings.Repeat("7", 199) + `…"`},
		{"7 MB xsi:type", envelope(`<g:ExportMapImage><MapDescription><MapArea xsi:type="g:P` + long + `"/></MapDescription></g:ExportMapImage>`), `…"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCodec().ReadRequest(strings.NewReader(tc.doc), nil)
			var f *soap.Fault
			if !errors.As(err, &f) {
				t.Fatalf("err = %.300v, want a fault", err)
			}
			if f.Code != soap.FaultClient || !strings.Contains(f.String, tc.want) || len(f.String) > 500 {
				t.Errorf("fault %s of %d bytes %.600q, want soap:Client containing %.300q", f.Code, len(f.String), f.String, tc.want)
			}
		})
	}

	internal := errors.New("minio: get outputs/0123.png: dial tcp 10.1.2.3:9000: connection refused")
	if f := soap.AsFault(internal); f.Code != soap.FaultServer || strings.Contains(f.String, "10.1.2.3") || strings.Contains(f.String, "outputs/") || f.Err != internal {
		t.Errorf("AsFault(store error) = %s %q (Err %v), want soap:Server without the error's text", f.Code, f.String, f.Err)
	}

	var b bytes.Buffer
	newCodec().WriteFault(&b, &soap.Fault{Code: soap.FaultClient, String: "bad: " + long})
	if b.Len() > soap.MaxFaultString+400 || !strings.Contains(b.String(), "7…</faultstring>") {
		t.Errorf("fault envelope of %d bytes, want the faultstring cut to %d characters", b.Len(), soap.MaxFaultString)
	}
}
