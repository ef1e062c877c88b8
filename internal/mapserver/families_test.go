package mapserver_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

// A front end calling a family's typed operation directly gets what Do answers for the same
// request, and the same request errors.
func TestFamiliesAnswerAsDo(t *testing.T) {
	f := mapservertest.New(t)
	ctx := context.Background()
	usa, _ := f.Cat.Service("usa")
	c := &mapserver.Call{Service: usa}
	fam := f.Srv.Families()

	qreq := &gisxml.QueryFeatureData2{LayerDescription: &gisxml.LayerDescription{LayerID: 1, DefinitionExpression: "STATEFP = '06'"},
		QueryFilter: mapservertest.Where("NAME LIKE 'San %'"), QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultRecordSetAsObject}}
	direct, err := fam.Queries.QueryFeatureData2(ctx, c, qreq)
	if err != nil {
		t.Fatal(err)
	}
	viaDo := mapservertest.Must[gisxml.QueryFeatureData2Response](f, "usa", "QueryFeatureData2", qreq)
	rs, ok := direct.Result.Object.(*gisxml.RecordSet)
	if !ok || len(rs.Records) != 7 {
		t.Fatalf("Queries.QueryFeatureData2: %T, want a RecordSet of the 7 'San' counties of California", direct.Result.Object)
	}
	if !reflect.DeepEqual(direct, viaDo) {
		t.Errorf("Queries.QueryFeatureData2 and Do differ")
	}

	info, err := fam.Information.GetServerInfo(ctx, c, &gisxml.GetServerInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if want := mapservertest.Must[gisxml.GetServerInfoResponse](f, "usa", "GetServerInfo", &gisxml.GetServerInfo{}); !reflect.DeepEqual(info, want) {
		t.Errorf("Information.GetServerInfo and Do differ")
	}

	// 1000 px at 96 DPI show 1000/96 inch; 254 km across them is 1:960,000 (as TestComputeScale).
	world, _ := f.Cat.Service("world")
	scale, err := fam.Cartography.ComputeScale(ctx, &mapserver.Call{Service: world}, &gisxml.ComputeScale{
		MapDescription: mapservertest.MapDesc(0, 0, 254000, 127000, 0), MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: 1000, ImageHeight: 500, ImageDPI: 96}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(scale.Result-960000) > 1e-6 {
		t.Errorf("Cartography.ComputeScale = %v, want 960000", scale.Result)
	}

	// The sample catalog has no tile store: no map is cached, and the fault is the request's.
	has, err := fam.Caches.HasSingleFusedMapCache(ctx, c, &gisxml.HasSingleFusedMapCache{})
	if err != nil || has.Result {
		t.Errorf("Caches.HasSingleFusedMapCache = %v, %v; want false without a tile store", has, err)
	}
	_, err = fam.Caches.GetMapTile(ctx, c, &gisxml.GetMapTile{Level: 0})
	var re *mapserver.RequestError
	if !errors.As(err, &re) || !errors.Is(err, mapserver.ErrInvalidArgument) {
		t.Errorf("Caches.GetMapTile on an uncached map: %v, want a request error", err)
	}
}
