package wmts_test

import (
	"strings"
	"testing"
)

// KVP parameter names are case-insensitive; one given twice with different values is refused,
// the same way every time (it used to be read from a Go map: 400 or 200 at random).
func TestKVPParameterGivenTwice(t *testing.T) {
	_, h := geographicFixture()
	const tile = "/?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=Countries&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm&TILEMATRIX=1&TILECOL=0"
	for range 20 {
		rec := get(h.ServeKVP, tile+"&TILEROW=0&tilerow=x", "service", "geo")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "parameter TILEROW is given more than once") {
			t.Fatalf("TILEROW and tilerow: %d %s", rec.Code, rec.Body)
		}
	}
	if rec := get(h.ServeKVP, strings.ToLower(tile)+"&tilerow=0&TileRow=0", "service", "geo"); rec.Code != 200 {
		t.Errorf("lower-case names, TileRow repeated with its value: %d %s", rec.Code, rec.Body)
	}
}

// A tile's level, row and column are digits alone: no sign, space or other number syntax, so
// that one tile has one URL; and a refused value is quoted at most 200 characters long.
func TestTileCoordinatesAreDigits(t *testing.T) {
	_, h := geographicFixture()
	for _, at := range [][3]string{{"0", "-0", "+0"}, {"+1", "0", "0"}, {"0", " 0", "0"}, {"0", "0", "0x1"}, {"0", "0", "1e1"},
		{"0", "0", "99999999999"}, {"0", "0", "2147483648"}, {"0", "0", ""}, {"0", "0", strings.Repeat("7z", 50_000)}} {
		rec := get(h.ServeTile, "/", "service", "geo", "level", at[0], "row", at[1], "col", at[2])
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "written in digits alone") || rec.Body.Len() > 600 {
			t.Errorf("tile %.40q: %d %.300s (%d bytes); want 400", at, rec.Code, rec.Body, rec.Body.Len())
		}
	}
	for _, rc := range [][2]string{{"-0", "0"}, {"0", "+0"}, {strings.Repeat("9", 100_000), "0"}} {
		rec := get(h.ServeKVP, "/?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=Countries&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm&TILEMATRIX=1&TILEROW="+rc[0]+"&TILECOL="+rc[1], "service", "geo")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "written in digits alone") || rec.Body.Len() > 1000 {
			t.Errorf("WMTS row %.40q col %q: %d %.300s (%d bytes); want 400", rc[0], rc[1], rec.Code, rec.Body, rec.Body.Len())
		}
	}
	if rec := get(h.ServeREST, "/", "service", "geo", "path", "tile/1.0.0/Countries/default/default028mm/1/00/01"); rec.Code != 200 {
		t.Errorf("leading zeros are digits: %d %s", rec.Code, rec.Body)
	}
}
