//go:build proj

package proj

/*
#cgo LDFLAGS: -lproj
#include <stdlib.h>
#include <string.h>
#include <proj.h>

// mf_crs is what mapfarm reads of a CRS.
typedef struct {
	int kind;                        // 1 geographic, 2 projected, 0 anything else
	int has_area;
	double west, south, east, north; // area of use, degrees
	double unit;                     // first axis: metres (projected) or radians (geographic) per unit
	int code;                        // authority code, 0 when none
	int north_first;                 // the first axis points north or south (latitude, northing)
} mf_crs;

static char *mf_dup(const char *s) { return s ? strdup(s) : NULL; }

// mf_describe reads the CRS def names; 0 when PROJ does not know it. *wkt (Esri WKT1) and
// *projstr (PROJ string) are malloc'ed, or NULL.
static int mf_describe(const char *def, mf_crs *out, char **wkt, char **projstr) {
	PJ_CONTEXT *ctx = proj_context_create();
	proj_log_level(ctx, PJ_LOG_NONE);
	PJ *crs = proj_create(ctx, def);
	if (!crs) {
		proj_context_destroy(ctx);
		return 0;
	}
	PJ *c = crs, *base = NULL;
	if (proj_get_type(crs) == PJ_TYPE_BOUND_CRS) {
		base = proj_get_source_crs(ctx, crs);
		if (base) c = base;
	}
	switch (proj_get_type(c)) {
	case PJ_TYPE_GEOGRAPHIC_2D_CRS:
	case PJ_TYPE_GEOGRAPHIC_3D_CRS:
		out->kind = 1;
		break;
	case PJ_TYPE_PROJECTED_CRS:
		out->kind = 2;
		break;
	default:
		out->kind = 0;
	}
	out->has_area = proj_get_area_of_use(ctx, crs, &out->west, &out->south, &out->east, &out->north, NULL);
	if (!out->has_area && base)
		out->has_area = proj_get_area_of_use(ctx, base, &out->west, &out->south, &out->east, &out->north, NULL);
	out->unit = 0;
	PJ *cs = proj_crs_get_coordinate_system(ctx, c);
	if (cs) {
		const char *dir = NULL;
		proj_cs_get_axis_info(ctx, cs, 0, NULL, NULL, &dir, &out->unit, NULL, NULL, NULL);
		out->north_first = dir && (strcmp(dir, "north") == 0 || strcmp(dir, "south") == 0);
		proj_destroy(cs);
	}
	const char *code = proj_get_id_code(c, 0);
	out->code = code ? atoi(code) : 0;
	*wkt = mf_dup(proj_as_wkt(ctx, crs, PJ_WKT1_ESRI, NULL));
	*projstr = mf_dup(proj_as_proj_string(ctx, c, PJ_PROJ_5, NULL));
	if (base) proj_destroy(base);
	proj_destroy(crs);
	proj_context_destroy(ctx);
	return 1;
}
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/paulmach/orb"
	goproj "github.com/twpayne/go-proj/v11"
)

// projEngine is PROJ: every system of its database, and any WKT it reads.
type projEngine struct{}

func newEngine() engine { return projEngine{} }

// definitions are the names PROJ may know an SR by: a WKID is EPSG's or, failing that,
// Esri's (ArcGIS numbers Esri's systems above EPSG's, 102100, 54030, …).
func definitions(sr SR) []string {
	if sr.WKID != 0 {
		return []string{"EPSG:" + strconv.Itoa(sr.WKID), "ESRI:" + strconv.Itoa(sr.WKID)}
	}
	return []string{strings.TrimSpace(sr.Text)}
}

func (projEngine) describe(sr SR) (CRS, error) {
	for _, def := range definitions(sr) {
		cdef := C.CString(def)
		var info C.mf_crs
		var wkt, projstr *C.char
		ok := C.mf_describe(cdef, &info, &wkt, &projstr) == 1
		C.free(unsafe.Pointer(cdef))
		w, ps := C.GoString(wkt), C.GoString(projstr)
		C.free(unsafe.Pointer(wkt))
		C.free(unsafe.Pointer(projstr))
		if !ok {
			continue
		}
		c := CRS{SR: sr, LatestWKID: int(info.code), WKT: w, def: def, Area: world(), NorthFirst: info.north_first != 0}
		if c.LatestWKID == 0 {
			c.LatestWKID = sr.WKID
		}
		switch info.kind {
		case 1:
			c.Geographic, c.MetersPerUnit = true, MetersPerDegree
		case 2:
			c.MetersPerUnit = float64(info.unit)
			if !(c.MetersPerUnit > 0) {
				c.MetersPerUnit = 1
			}
		default:
			return CRS{}, fmt.Errorf("%w: %s is neither a geographic nor a projected coordinate system", ErrUnsupported, sr.Name())
		}
		if info.has_area != 0 && info.west >= -180 && info.east <= 180 && info.south >= -90 && info.north <= 90 && info.south < info.north {
			if info.west <= info.east { // an area across the antimeridian (west > east) counts as every longitude
				c.Area = orb.Bound{Min: orb.Point{float64(info.west), float64(info.south)}, Max: orb.Point{float64(info.east), float64(info.north)}}
			} else {
				c.Area = orb.Bound{Min: orb.Point{-180, float64(info.south)}, Max: orb.Point{180, float64(info.north)}}
			}
		}
		c.LonOrigin = lonOrigin(ps)
		if !c.Geographic {
			c.Shape = shapeOf(ps)
		}
		return c, nil
	}
	return CRS{}, fmt.Errorf("%w: %s is not a coordinate system PROJ knows", ErrUnsupported, sr.Name())
}

// lonOrigin reads the central meridian (+lon_0, and +pm) of a PROJ string; 0 when it has none.
func lonOrigin(ps string) float64 {
	lon := 0.0
	for _, f := range strings.Fields(ps) {
		k, v, ok := strings.Cut(strings.TrimPrefix(f, "+"), "=")
		if !ok {
			continue
		}
		switch k {
		case "lon_0", "lonc":
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				lon += x
			}
		case "pm":
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				lon += x
			}
		}
	}
	return lon
}

// shapeOf reads the Shape of a projected system from its PROJ string.
func shapeOf(ps string) Shape {
	params := map[string]string{}
	for _, f := range strings.Fields(ps) {
		k, v, _ := strings.Cut(strings.TrimPrefix(f, "+"), "=")
		params[k] = v
	}
	lat0, _ := strconv.ParseFloat(params["lat_0"], 64)
	switch params["proj"] {
	case "aea", "lcc", "eqdc":
		return ShapeConic
	case "ups":
		if _, south := params["south"]; south {
			return ShapeSouthPolar
		}
		return ShapeNorthPolar
	case "stere", "laea", "aeqd":
		switch lat0 {
		case 90:
			return ShapeNorthPolar
		case -90:
			return ShapeSouthPolar
		}
	}
	return ShapeRegional
}

// pjOperation is a PROJ transformation with axes in longitude/latitude, easting/northing
// order (normalized for visualization). go-proj serialises calls on its context.
type pjOperation struct{ pj *goproj.PJ }

func (projEngine) operation(from, to CRS) (operation, error) {
	ctx := goproj.NewContext()
	pj, err := ctx.NewCRSToCRS(from.def, to.def, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: no transformation from %s to %s: %w", ErrUnsupported, from.SR.Name(), to.SR.Name(), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return nil, fmt.Errorf("%w: %s to %s: %w", ErrUnsupported, from.SR.Name(), to.SR.Name(), err)
	}
	return pjOperation{norm}, nil
}

func flat(ps []orb.Point) []float64 {
	if len(ps) == 0 {
		return nil
	}
	return unsafe.Slice(&ps[0][0], 2*len(ps))
}

func (o pjOperation) forward(ps []orb.Point) error { return o.trans(goproj.DirectionFwd, ps) }
func (o pjOperation) inverse(ps []orb.Point) error { return o.trans(goproj.DirectionInv, ps) }

// trans transforms ps in place in direction dir.
func (o pjOperation) trans(dir goproj.Direction, ps []orb.Point) error {
	if len(ps) == 0 {
		return nil
	}
	if err := o.pj.TransFlatCoords(dir, flat(ps), 2, -1, -1); err != nil {
		return fmt.Errorf("%w: %w", ErrOutside, err)
	}
	return nil
}
