package mapdraw_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/task"
)

// fill sets every field reachable from v to a value that is not its zero value, different for
// each field (n counts them), so that a field a conversion forgets shows as a difference.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n%100 + 1))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(uint64(*n%200 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func filled[T any](t *testing.T) T {
	t.Helper()
	var x T
	n := 0
	fill(reflect.ValueOf(&x).Elem(), &n)
	return x
}

// viaJSON sends a payload through JSON, as the queue does.
func viaJSON[T any](t *testing.T, p T) T {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestPayloadRoundTrip: every field of a drawing, a graphic and a scale bar survives the trip to
// the payload, through JSON and back. The values are filled in by reflection, so a field added
// to the drawing types and forgotten by the conversions fails here.
func TestPayloadRoundTrip(t *testing.T) {
	d := filled[symbology.Drawing](t)
	if back := mapdraw.DrawingFromPayload(viaJSON(t, mapdraw.DrawingPayload(&d))); !reflect.DeepEqual(*back, d) {
		t.Errorf("drawing:\n got %+v\nwant %+v", *back, d)
	}
	gs := filled[[]symbology.Graphic](t)
	if back := mapdraw.GraphicsFromPayload(viaJSON(t, mapdraw.GraphicsPayload(gs))); !reflect.DeepEqual(back, gs) {
		t.Errorf("graphics:\n got %+v\nwant %+v", back, gs)
	}
	sb := filled[render.ScaleBar](t)
	if back := mapdraw.ScaleBarFromPayload(viaJSON(t, mapdraw.ScaleBarPayload(sb))); !reflect.DeepEqual(back, sb) {
		t.Errorf("scale bar:\n got %+v\nwant %+v", back, sb)
	}
	// And the other way: every payload field reaches the drawing types.
	pd := filled[task.Drawing](t)
	if back := mapdraw.DrawingPayload(mapdraw.DrawingFromPayload(&pd)); !reflect.DeepEqual(*back, pd) {
		t.Errorf("drawing payload:\n got %+v\nwant %+v", *back, pd)
	}
	psb := filled[task.ScaleBar](t)
	if back := mapdraw.ScaleBarPayload(mapdraw.ScaleBarFromPayload(psb)); !reflect.DeepEqual(back, psb) {
		t.Errorf("scale bar payload:\n got %+v\nwant %+v", back, psb)
	}
}

// TestNoDrawingTravelsAsNil: an unchanged layer carries no drawing, and an empty label list
// (labels turned off) is not mistaken for "the layer's own labels".
func TestNoDrawingTravelsAsNil(t *testing.T) {
	if p := mapdraw.DrawingPayload(nil); p != nil {
		t.Errorf("nil drawing → %+v", p)
	}
	var zero symbology.Drawing
	if !zero.IsZero() {
		t.Error("zero drawing is not IsZero")
	}
	off := symbology.Drawing{Labels: []symbology.Label{}}
	if off.IsZero() {
		t.Error("labels turned off reads as no change")
	}
	back := mapdraw.DrawingFromPayload(viaJSON(t, mapdraw.DrawingPayload(&off)))
	if back.Labels == nil || len(back.Labels) != 0 {
		t.Errorf("labels turned off came back as %#v", back.Labels)
	}
}
