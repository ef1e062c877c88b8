package queries_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

const stateFacts = 3 // the usa map's State facts layer

// idOf finds the one feature of a layer matching a where clause.
func idOf(t *testing.T, f *mapservertest.Fixture, layer int, clause string) int {
	t.Helper()
	ids := f.IDs("usa", layer, mapservertest.Where(clause))
	if len(ids) != 1 {
		t.Fatalf("layer %d %s: %d features", layer, clause, len(ids))
	}
	return ids[0]
}

func TestQueryRelatedRecords(t *testing.T) {
	f := mapservertest.New(t)
	ca, tx := idOf(t, f, 0, "NAME = 'California'"), idOf(t, f, 0, "NAME = 'Texas'")
	res := mapservertest.Must[gisxml.QueryRelatedRecordsResponse](f, "usa", "QueryRelatedRecords", &gisxml.QueryRelatedRecords{
		SourceTableID: 0, SourceFIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{tx, ca}},
		RelateDescription: &gisxml.RelateDescription{RelationshipID: 0, RelatedTableFields: operation.Ptr("NAME,STATEFP"), ResultFormat: gisxml.RelateResultRelatedRecordSetAsObject},
	}).Result
	set, ok := res.Object.(*gisxml.RelatedRecordSet)
	if !ok {
		t.Fatalf("Object is %T", res.Object)
	}
	if len(set.RelatedRecordGroups) != 2 || set.RelatedRecordGroups[0].SourceRowID != tx || set.RelatedRecordGroups[1].SourceRowID != ca {
		t.Fatalf("groups %+v, want Texas then California", set.RelatedRecordGroups)
	}
	if n, m := len(set.RelatedRecordGroups[0].Records), len(set.RelatedRecordGroups[1].Records); n != 254 || m != 58 {
		t.Errorf("related counties: Texas %d, California %d; want 254 and 58", n, m)
	}
	for _, r := range set.RelatedRecordGroups[1].Records {
		if r.Values[1] != "06" {
			t.Fatalf("California group holds %v", r.Values)
		}
	}
	if names := []string{set.RelatedRecordFields.FieldArray[0].Name, set.RelatedRecordFields.FieldArray[1].Name}; !slices.Equal(names, []string{"NAME", "STATEFP"}) {
		t.Errorf("related fields %v", names)
	}

	// The other way round, one-to-one, from the Counties layer to States, as JSON, with geometry
	// dropped and a definition expression on the related side.
	la := idOf(t, f, 1, "GEOID = '06037'")
	res = mapservertest.Must[gisxml.QueryRelatedRecords2Response](f, "usa", "QueryRelatedRecords2", &gisxml.QueryRelatedRecords2{
		MapTableDescription: &gisxml.LayerDescription{LayerID: 1}, SourceFIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{la}},
		RelateDescription: &gisxml.RelateDescription{RelationshipID: 2, IncludeGeometry: operation.Ptr(false), ResultFormat: gisxml.RelateResultJsonAsMime},
	}).Result
	var doc struct {
		Groups []struct {
			ObjectID       int `json:"objectId"`
			RelatedRecords []struct {
				Attributes map[string]any
				Geometry   any
			} `json:"relatedRecords"`
		} `json:"relatedRecordGroups"`
	}
	if err := json.Unmarshal(res.MimeData, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 1 || len(doc.Groups[0].RelatedRecords) != 1 || doc.Groups[0].RelatedRecords[0].Attributes["NAME"] != "California" || doc.Groups[0].RelatedRecords[0].Geometry != nil {
		t.Errorf("LA county's state: %s", res.MimeData)
	}
	f.ClientFault("usa", "QueryRelatedRecords", &gisxml.QueryRelatedRecords{SourceTableID: 1, SourceFIDSet: &gisxml.FIDSet{},
		RelateDescription: &gisxml.RelateDescription{RelationshipID: 0}})
	if _, err := f.Do("usa", "QueryRelatedRecords", &gisxml.QueryRelatedRecords{SourceTableID: 0, SourceFIDSet: &gisxml.FIDSet{},
		RelateDescription: &gisxml.RelateDescription{RelationshipID: 9}}); err == nil {
		t.Error("relationship 9 accepted")
	}
	info := mapservertest.Must[gisxml.GetServerInfoResponse](f, "usa", "GetServerInfo", &gisxml.GetServerInfo{}).Result
	if ri := info.MapLayerInfos[0].RelateInfos; len(ri) != 2 || ri[0].RelatedTableID != 2 {
		t.Errorf("States RelateInfos %+v", ri)
	}
}

func TestHyperlinksAndPopups(t *testing.T) {
	f := mapservertest.New(t)
	md, disp := usaView(t, f)
	res := mapservertest.Must[gisxml.QueryHyperlinksResponse](f, "usa", "QueryHyperlinks", &gisxml.QueryHyperlinks{MapDescription: md, MapImageDisplay: disp}).Result
	if len(res) != 0 {
		t.Errorf("%d hyperlinks with the state facts layer hidden, want 0", len(res))
	}
	shown := *md
	shown.LayerDescriptions = slices.Clone(md.LayerDescriptions)
	for i, ld := range shown.LayerDescriptions {
		if ld.LayerID == stateFacts {
			c := *ld
			c.Visible = true
			shown.LayerDescriptions[i] = &c
		}
	}
	res = mapservertest.Must[gisxml.QueryHyperlinksResponse](f, "usa", "QueryHyperlinks", &gisxml.QueryHyperlinks{MapDescription: &shown, MapImageDisplay: disp}).Result
	// The default extent shows the contiguous states only: not Alaska, Hawaii or the territories.
	var urls []string
	for _, h := range res {
		urls = append(urls, h.URL)
		if _, ok := h.Location.(*gisxml.PointN); !ok {
			t.Fatalf("hyperlink location %T", h.Location)
		}
	}
	if !slices.Contains(urls, "https://en.wikipedia.org/wiki/New_Mexico") || slices.Contains(urls, "https://en.wikipedia.org/wiki/Guam") || len(urls) < 48 {
		t.Errorf("%d hyperlinks: %v", len(urls), urls)
	}

	tx := idOf(t, f, stateFacts, "NAME = 'Texas'")
	pops := mapservertest.Must[gisxml.QueryHTMLPopupsResponse](f, "usa", "QueryHTMLPopups", &gisxml.QueryHTMLPopups{TableID: stateFacts, RowIDs: gisxml.ArrayOfInt{tx, 999999}}).Result
	if len(pops) != 1 || !strings.Contains(pops[0], "<h3>Texas</h3>") || !strings.Contains(pops[0], "254 counties") {
		t.Errorf("Texas popup %q", pops)
	}
	pops = mapservertest.Must[gisxml.QueryHTMLPopups2Response](f, "usa", "QueryHTMLPopups2", &gisxml.QueryHTMLPopups2{
		MapTableDescription: &gisxml.LayerDescription{LayerID: stateFacts, DefinitionExpression: "REGION = 4"}, RowIDs: gisxml.ArrayOfInt{tx}}).Result
	if len(pops) != 0 {
		t.Errorf("Texas is not in the West, yet popups %q", pops)
	}
	f.ClientFault("usa", "QueryHTMLPopups", &gisxml.QueryHTMLPopups{TableID: 1, RowIDs: gisxml.ArrayOfInt{1}})

	// Identify with popups fills the layer's template.
	id := mapservertest.Must[gisxml.IdentifyResponse](f, "usa", "Identify", &gisxml.Identify{MapDescription: &shown, MapImageDisplay: disp,
		SearchShape: &gisxml.PointN{X: laX, Y: laY}, IdentifyOption: gisxml.IdentifyVisibleWithHTMLPopup, LayerIDs: gisxml.ArrayOfInt{stateFacts}}).Result
	if len(id) != 1 || id[0].HTMLPopup == nil || !strings.Contains(*id[0].HTMLPopup, "<h3>California</h3>") {
		t.Errorf("identify popup %+v", id)
	}
}

func TestAttachments(t *testing.T) {
	f := mapservertest.New(t)
	tx, utah := idOf(t, f, stateFacts, "NAME = 'Texas'"), idOf(t, f, stateFacts, "NAME = 'Utah'")
	infos := mapservertest.Must[gisxml.QueryAttachmentInfosResponse](f, "usa", "QueryAttachmentInfos", &gisxml.QueryAttachmentInfos{TableID: stateFacts, RowIDs: gisxml.ArrayOfInt{tx, utah}}).Result
	var names []string
	for _, a := range infos {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Texas.txt", "Utah.txt", "swatch.png"}) {
		t.Fatalf("attachments %v", names)
	}
	all := mapservertest.Must[gisxml.QueryAttachmentInfosResponse](f, "usa", "QueryAttachmentInfos", &gisxml.QueryAttachmentInfos{TableID: stateFacts}).Result
	if len(all) != 15 {
		t.Errorf("%d attachments in all, want 15 (13 western states, 2 for Texas)", len(all))
	}
	var note, swatch *gisxml.AttachmentInfo
	for _, a := range infos {
		switch a.Name {
		case "Texas.txt":
			note = a
		case "swatch.png":
			swatch = a
		}
	}
	data := mapservertest.Must[gisxml.QueryAttachmentDataResponse](f, "usa", "QueryAttachmentData", &gisxml.QueryAttachmentData{TableID: stateFacts,
		AttachmentIDs: gisxml.ArrayOfInt{note.AttachmentID}, TransportType: gisxml.TransportTypeEmbedded}).Result
	if len(data) != 1 || !strings.HasPrefix(string(data[0].Data), "Texas: 254 county records") || data[0].AttachmentInfo.Size != len(data[0].Data) {
		t.Errorf("Texas note %+v %q", data[0].AttachmentInfo, data[0].Data)
	}
	data = mapservertest.Must[gisxml.QueryAttachmentDataResponse](f, "usa", "QueryAttachmentData", &gisxml.QueryAttachmentData{TableID: stateFacts,
		AttachmentIDs: gisxml.ArrayOfInt{swatch.AttachmentID}, TransportType: gisxml.TransportTypeUrl}).Result
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(data[0].URL, "data:image/png;base64,"))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") || data[0].Data != nil {
		t.Errorf("swatch URL %.60q: %v", data[0].URL, err)
	}
	// The 2 variants apply the definition expression: Texas is not western.
	infos = mapservertest.Must[gisxml.QueryAttachmentInfos2Response](f, "usa", "QueryAttachmentInfos2", &gisxml.QueryAttachmentInfos2{
		MapTableDescription: &gisxml.LayerDescription{LayerID: stateFacts, DefinitionExpression: "REGION = 4"}, RowIDs: gisxml.ArrayOfInt{tx, utah}}).Result
	if len(infos) != 1 || infos[0].Name != "Utah.txt" {
		t.Errorf("western attachments %+v", infos)
	}
	if _, err := f.Do("usa", "QueryAttachmentData2", &gisxml.QueryAttachmentData2{MapTableDescription: &gisxml.LayerDescription{LayerID: stateFacts, DefinitionExpression: "REGION = 4"},
		AttachmentIDs: gisxml.ArrayOfInt{note.AttachmentID}}); err == nil {
		t.Error("Texas's note served through a western-only description")
	}
	f.ClientFault("usa", "QueryAttachmentInfos", &gisxml.QueryAttachmentInfos{TableID: 1})
}

func TestGenerateDataClasses(t *testing.T) {
	f := mapservertest.New(t)
	classify := func(method gisxml.ClassifyMethod, k int64) *gisxml.ClassBreaksRenderer {
		t.Helper()
		r := mapservertest.Must[gisxml.GenerateDataClassesResponse](f, "usa", "GenerateDataClasses", &gisxml.GenerateDataClasses{
			MapTableDescription:   &gisxml.LayerDescription{LayerID: stateFacts},
			DataClassificationDef: &gisxml.ClassBreaksDef{ClassificationField: "COUNTIES", ClassificationMethod: method, BreakCount: operation.Ptr(k)},
		}).Result
		cb, ok := r.(*gisxml.ClassBreaksRenderer)
		if !ok {
			t.Fatalf("renderer %T", r)
		}
		return cb
	}
	// County counts per state run from 1 (DC) to 254 (Texas).
	eq := classify(gisxml.ClassifyEqualInterval, 2)
	if eq.MinimumValue != 1 || len(eq.ClassBreakInfos) != 2 || eq.ClassBreakInfos[0].ClassMaximumValue != 127.5 || eq.ClassBreakInfos[1].ClassMaximumValue != 254 {
		t.Errorf("equal interval %+v", eq.ClassBreakInfos)
	}
	for _, m := range []gisxml.ClassifyMethod{gisxml.ClassifyNaturalBreaks, gisxml.ClassifyQuantile, gisxml.ClassifyStandardDeviation} {
		r := classify(m, 4)
		last := r.ClassBreakInfos[len(r.ClassBreakInfos)-1]
		if last.ClassMaximumValue != 254 || len(r.ClassBreakInfos) < 2 {
			t.Errorf("%s: %d classes, last max %g", m, len(r.ClassBreakInfos), last.ClassMaximumValue)
		}
		for i := 1; i < len(r.ClassBreakInfos); i++ {
			if r.ClassBreakInfos[i].ClassMinimumValue != r.ClassBreakInfos[i-1].ClassMaximumValue || r.ClassBreakInfos[i].ClassMaximumValue <= r.ClassBreakInfos[i-1].ClassMaximumValue {
				t.Errorf("%s: classes not contiguous and ascending: %+v", m, r.ClassBreakInfos)
			}
		}
	}
	// Natural breaks put Texas (254) in a class of its own with 4 classes: no other state has
	// more than 159 counties (Georgia).
	nb := classify(gisxml.ClassifyNaturalBreaks, 4)
	if n := len(nb.ClassBreakInfos); nb.ClassBreakInfos[n-2].ClassMaximumValue != 159 {
		t.Errorf("natural breaks %v", nb.ClassBreakInfos)
	}

	r := mapservertest.Must[gisxml.GenerateDataClassesResponse](f, "usa", "GenerateDataClasses", &gisxml.GenerateDataClasses{
		MapTableDescription:   &gisxml.LayerDescription{LayerID: stateFacts},
		DataClassificationDef: &gisxml.UniqueValuesDef{Fields: gisxml.ArrayOfString{"REGION"}},
	}).Result
	uv := r.(*gisxml.UniqueValueRenderer)
	var vals []string
	for _, v := range uv.UniqueValueInfos {
		vals = append(vals, v.Value)
	}
	if !slices.Equal(vals, []string{"1", "2", "3", "4", "9"}) {
		t.Errorf("unique REGION values %v", vals)
	}
	f.ClientFault("usa", "GenerateDataClasses", &gisxml.GenerateDataClasses{MapTableDescription: &gisxml.LayerDescription{LayerID: stateFacts},
		DataClassificationDef: &gisxml.ClassBreaksDef{ClassificationField: "NAME"}})
}

func TestQueryRasterValue(t *testing.T) {
	f := mapservertest.New(t)
	tx, ny := idOf(t, f, stateFacts, "NAME = 'Texas'"), idOf(t, f, stateFacts, "NAME = 'New York'")
	res := mapservertest.Must[gisxml.QueryRasterValueResponse](f, "usa", "QueryRasterValue", &gisxml.QueryRasterValue{SourceTableID: stateFacts,
		RowIDs: gisxml.ArrayOfInt{tx, ny}}).Result
	if len(res) != 2 {
		t.Fatalf("%d images, want 2", len(res))
	}
	for _, r := range res {
		if _, err := png.Decode(bytes.NewReader(r.ImageData)); err != nil || r.ImageWidth != 8 || r.ImageHeight != 8 || *r.ImageType != "image/png" {
			t.Fatalf("image %dx%d %v: %v", r.ImageWidth, r.ImageHeight, r.ImageType, err)
		}
	}
	// make_state_facts.sh colours the South (Texas) green and the Northeast (New York) blue.
	south, _ := png.Decode(bytes.NewReader(res[0].ImageData))
	northeast, _ := png.Decode(bytes.NewReader(res[1].ImageData))
	if r, g, b, _ := south.At(4, 4).RGBA(); r>>8 != 44 || g>>8 != 160 || b>>8 != 44 {
		t.Errorf("Texas swatch %d %d %d, want the South's green", r>>8, g>>8, b>>8)
	}
	if r, g, b, _ := northeast.At(4, 4).RGBA(); r>>8 != 31 || g>>8 != 119 || b>>8 != 180 {
		t.Errorf("New York swatch %d %d %d, want the Northeast's blue", r>>8, g>>8, b>>8)
	}
	res = mapservertest.Must[gisxml.QueryRasterValue2Response](f, "usa", "QueryRasterValue2", &gisxml.QueryRasterValue2{
		MapTableDescription: &gisxml.LayerDescription{LayerID: stateFacts, DefinitionExpression: "REGION = 3"}, RowIDs: gisxml.ArrayOfInt{tx, ny},
		FieldName: operation.Ptr("swatch"), ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImageJPG, ImageReturnType: gisxml.ImageReturnURL}}).Result
	if len(res) != 1 || !strings.HasPrefix(res[0].ImageURL, "data:image/jpeg;base64,") || res[0].ImageData != nil {
		t.Errorf("southern JPEG by URL: %d results %.40q", len(res), res[0].ImageURL)
	}
	info := mapservertest.Must[gisxml.GetServerInfoResponse](f, "usa", "GetServerInfo", &gisxml.GetServerInfo{}).Result
	for _, l := range info.MapLayerInfos {
		if l.LayerID != stateFacts {
			continue
		}
		for _, fd := range l.Fields.FieldArray {
			if fd.Name == "SWATCH" && fd.Type != gisxml.FieldTypeRaster {
				t.Errorf("SWATCH is %s, want a raster field", fd.Type)
			}
		}
		if !*l.HasAttachments || !*l.HasSubtype || !l.HasHyperlinks || *l.HTMLPopupType != gisxml.ServerHTMLPopupTypeAsHTMLText {
			t.Errorf("State facts info: attachments %v subtype %v hyperlinks %v popup %v", *l.HasAttachments, *l.HasSubtype, l.HasHyperlinks, *l.HTMLPopupType)
		}
	}
	f.ClientFault("usa", "QueryRasterValue", &gisxml.QueryRasterValue{SourceTableID: 1, RowIDs: gisxml.ArrayOfInt{1}})
	f.ClientFault("usa", "QueryRasterValue", &gisxml.QueryRasterValue{SourceTableID: stateFacts, RowIDs: gisxml.ArrayOfInt{tx}, FieldName: operation.Ptr("NAME")})
}
