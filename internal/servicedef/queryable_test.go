package servicedef_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

func TestQueryableKeys(t *testing.T) {
	cfg, err := servicedef.Load(writeConfig(t, `services:
  - name: usa
    maps:
      - spatialReference: 3857
        layers:
          - name: Facts
            source: {geopackage: SAMPLE/us_state_facts_3857.gpkg, table: state_facts}
            hyperlinkField: wiki
            popup: {template: "<b>{NAME}</b> {counties}"}
            attachments: true
            domains:
              region: {name: R, type: codedValue, values: [{code: 1, name: Northeast}, {code: 9, name: Territory}]}
              AREA_KM2: {name: A, type: range, min: 0, max: 2000000}
            subtypes: {field: REGION, values: [{code: 1, name: Northeast}, {code: 9, name: Territory}]}
        tables:
          - name: Counties
            source: {geopackage: SAMPLE/us_counties_10m_3857.gpkg, table: counties}
        relationships:
          - {name: Facts counties, origin: 0, destination: 1, originKey: statefp, destinationKey: STATEFP}
`), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Services[0].Maps[0]
	q := m.Layers[0].Queryable
	if q.HyperlinkField != "WIKI" || q.Popup.Type != servicedef.PopupHTML || !q.Attachments || q.Subtypes.Default != 1 {
		t.Errorf("queryable %+v", q)
	}
	if d := q.Domains["REGION"]; d == nil || len(d.Codes) != 2 || d.Codes[1] != (servicedef.CodedValue{Code: "9", Name: "Territory"}) {
		t.Errorf("REGION domain %+v (domains %v)", d, q.Domains)
	}
	if d := q.Domains["AREA_KM2"]; d == nil || d.Type != servicedef.RangeDomain || d.Max != 2000000 {
		t.Errorf("AREA_KM2 domain %+v", d)
	}
	r := m.Relationships
	if len(r) != 1 || r[0].ID != 0 || r[0].OriginKey != "STATEFP" || r[0].Cardinality != "oneToMany" || r[0].Destination != 1 {
		t.Errorf("relationships %+v", r)
	}
	filled := q.Popup.Fill(func(f string) string { return "<" + f + ">" })
	if filled != "<b><NAME></b> <counties>" {
		t.Errorf("Fill = %q", filled)
	}
}

func TestQueryableValidation(t *testing.T) {
	path := writeConfig(t, `services:
  - name: usa
    maps:
      - spatialReference: 3857
        layers:
          - name: States
            source: {geopackage: SAMPLE/us_states_10m_3857.gpkg, table: states}
            hyperlinkField: fid
            popup: {type: pdf, template: "{NOPE}"}
            attachments: true
            domains:
              NAME: {name: N, type: range, min: 5, max: 1}
              STATEFP: {name: S, type: coded}
            subtypes: {field: NAME, default: 4, values: [{code: 1, name: A}, {code: 1, name: B}]}
        relationships:
          - {name: R, origin: 0, destination: 5, originKey: NOPE, destinationKey: X, cardinality: manyToMany}
`)
	_, err := servicedef.Load(path, providers.Registry())
	var ve *servicedef.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	text := err.Error()
	for _, w := range []string{
		`8:29: hyperlinkField "fid" must be a String field`,
		`9:20: popup type "pdf": want htmlText or url`,
		`9:42: popup placeholder "NOPE" is not a column of table "states"`,
		`10:26: attachments: table "states__ATTACH" not found in the GeoPackage`,
		`12:49: range domain "N": min 5 is larger than max 1`,
		`12:21: range domain "N" needs a numeric field; NAME is esriFieldTypeString`,
		`13:40: domain type "coded": want codedValue or range`,
		`14:31: subtypes field "NAME" must be an Integer field`,
		`14:85: subtype code 1 listed twice`,
		`14:46: subtypes default 4 is not one of the codes`,
		`16:99: cardinality "manyToMany": want oneToOne or oneToMany`,
		`16:47: relationship "R": destination 5 is not a layer or table of map "Layers"`,
		`16:61: relationship "R": originKey "NOPE" is not a column of table "states"`,
	} {
		if !strings.Contains(text, path+":"+w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}
