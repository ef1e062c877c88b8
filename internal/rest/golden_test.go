package rest_test

import (
	"net/url"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/rest"
)

// goldenTargets are answers whose bytes are pinned in testdata/golden: key order, number
// formatting, null against absent members and escaping, as clients see them.
var goldenTargets = map[string]string{
	"info":        "/arcgis/rest/info?f=json",
	"services":    "/arcgis/rest/services?f=json",
	"extent_none": "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1%3D0&returnExtentOnly=true",
	"root":        "/arcgis/rest/services/usa/MapServer?f=json",
	"root_world":  "/arcgis/rest/services/world/MapServer?f=json",
	"layers":      "/arcgis/rest/services/usa/MapServer/layers?f=json",
	"layer1":      "/arcgis/rest/services/usa/MapServer/1?f=pjson",
	"table2":      "/arcgis/rest/services/usa/MapServer/2?f=json",
	"legend":      "/arcgis/rest/services/usa/MapServer/legend?f=json",
	"related":     "/arcgis/rest/services/usa/MapServer/1/queryRelatedRecords?objectIds=1&relationshipId=2&outFields=NAME&returnGeometry=false&f=json",
	"identify": "/arcgis/rest/services/world/MapServer/identify?sr=4326&layers=all:1&tolerance=3&returnGeometry=true&imageDisplay=512,512,96" +
		"&mapExtent=-20,30,40,60&geometry=" + url.QueryEscape(`{"x":2.35,"y":46.8,"spatialReference":{"wkid":4326}}`) + "&geometryType=esriGeometryPoint&f=json",
	"find":     "/arcgis/rest/services/world/MapServer/find?searchText=Franc&contains=true&searchFields=NAME&layers=1&returnGeometry=false&returnFieldName=true&f=json",
	"query":    "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=STATE%3D%27Delaware%27&outFields=*&returnGeometry=false",
	"count":    "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1%3D1&returnCountOnly=true",
	"ids":      "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=STATE%3D%27Delaware%27&returnIdsOnly=true",
	"ids_none": "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1%3D0&returnIdsOnly=true",
	"extent":   "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=STATE%3D%27Delaware%27&returnExtentOnly=true",
	"export":   "/arcgis/rest/services/usa/MapServer/export?bbox=-14000000,2800000,-7000000,6500000&size=256,128&f=json",
	"error":    "/arcgis/rest/services/usa/MapServer/9?f=json",
}

// The answers are byte for byte those pinned in testdata/golden (see rest.CheckGolden).
func TestGoldenAnswers(t *testing.T) {
	h := newHandler(t)
	for name, target := range goldenTargets {
		_, body := get(t, h, target)
		rest.CheckGolden(t, name, body)
	}
}

// A token-based server's info says where tokens are issued, in the members the hand-written
// answer had.
func TestInfoTokenBased(t *testing.T) {
	h := rest.New(rest.Params{Services: catalogtest.Samples(t), PublicURL: "http://farm.test", TokenBased: true, TokenServicesURL: "https://farm.test/tokens?a=<b>&c"})
	_, body := get(t, h, "/arcgis/rest/info?f=json")
	want := `{"currentVersion":10.71,"fullVersion":"10.7.1","soapUrl":"http://farm.test/arcgis/services","secureSoapUrl":null,` +
		`"authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://farm.test/tokens?a=<b>&c","shortLivedTokenValidity":60}}`
	if string(body) != want {
		t.Errorf("got  %s\nwant %s", body, want)
	}
}
