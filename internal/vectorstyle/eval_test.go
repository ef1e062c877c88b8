package vectorstyle_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// eval evaluates the part of the style expression language the generator writes, with the
// semantics of the style specification, over a feature's properties as a client decodes them
// from a tile (numbers are float64). An expression that errors evaluates to errValue.
func eval(e any, props map[string]any) (out any) {
	defer func() {
		if r := recover(); r != nil {
			out = errValue{fmt.Sprint(r)}
		}
	}()
	return ev(e, props)
}

type errValue struct{ msg string }

// zoomKey is the property eval reads ["zoom"] from.
const zoomKey = "$zoom"

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	panic(fmt.Sprintf("not a number: %v", v))
}

func ev(e any, props map[string]any) any {
	a, ok := e.([]any)
	if !ok || len(a) == 0 {
		return e
	}
	op, ok := a[0].(string)
	if !ok {
		return e // a literal array
	}
	arg := func(i int) any { return ev(a[i], props) }
	switch op {
	case "get":
		return props[a[1].(string)]
	case "zoom":
		return props[zoomKey]
	case "*":
		p := 1.0
		for i := 1; i < len(a); i++ {
			p *= arg(i).(float64)
		}
		return p
	case "interpolate":
		// ["interpolate", ["exponential", base] or ["linear"], input, (stop, output)+]
		typ := a[1].([]any)
		base := 1.0
		if typ[0] == "exponential" {
			base = toFloat(typ[1])
		}
		x := arg(2).(float64)
		stop := func(i int) float64 { return toFloat(a[i]) }
		if x <= stop(3) {
			return arg(4)
		}
		for i := 3; i+3 < len(a); i += 2 {
			x0, x1 := stop(i), stop(i+2)
			if x <= x1 {
				t := (x - x0) / (x1 - x0)
				if base != 1 {
					t = (math.Pow(base, x-x0) - 1) / (math.Pow(base, x1-x0) - 1)
				}
				y0, y1 := arg(i+1).(float64), arg(i+3).(float64)
				return y0 + t*(y1-y0)
			}
		}
		return arg(len(a) - 1)
	case "literal":
		return a[1]
	case "to-string":
		return toString(arg(1))
	case "to-number":
		switch v := arg(1).(type) {
		case float64:
			return v
		case nil:
			return 0.0
		case bool:
			if v {
				return 1.0
			}
			return 0.0
		case string:
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				return x
			}
		}
		panic("to-number: cannot convert")
	case "typeof":
		switch arg(1).(type) {
		case float64:
			return "number"
		case string:
			return "string"
		case bool:
			return "boolean"
		case nil:
			return "null"
		}
		return "object"
	case "coalesce":
		for i := 1; i < len(a); i++ {
			if v := arg(i); v != nil {
				return v
			}
		}
		return nil
	case "concat":
		var b strings.Builder
		for i := 1; i < len(a); i++ {
			b.WriteString(toString(arg(i)))
		}
		return b.String()
	case "match":
		in := arg(1)
		for i := 2; i < len(a)-2; i += 2 {
			labels, isArr := a[i].([]any)
			if !isArr {
				labels = []any{a[i]}
			}
			for _, l := range labels {
				if l == in {
					return arg(i + 1)
				}
			}
		}
		return arg(len(a) - 1)
	case "step":
		x := arg(1).(float64)
		out := arg(2)
		for i := 3; i+1 < len(a); i += 2 {
			if x >= a[i].(float64) {
				out = arg(i + 1)
			}
		}
		return out
	case "case":
		for i := 1; i+1 < len(a); i += 2 {
			if arg(i).(bool) {
				return arg(i + 1)
			}
		}
		return arg(len(a) - 1)
	case "all":
		for i := 1; i < len(a); i++ {
			if !arg(i).(bool) {
				return false
			}
		}
		return true
	case "==", "!=":
		x, y := arg(1), arg(2)
		eq := x == y
		if op == "!=" {
			return !eq
		}
		return eq
	case "<", "<=", ">", ">=":
		x, okx := arg(1).(float64)
		y, oky := arg(2).(float64)
		if !okx || !oky {
			panic(op + ": not numbers")
		}
		switch op {
		case "<":
			return x < y
		case "<=":
			return x <= y
		case ">":
			return x > y
		}
		return x >= y
	}
	panic("unknown operator " + op)
}

// toString is the specification's to-string: null is "", numbers as JavaScript writes them.
func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func TestEval(t *testing.T) {
	p := map[string]any{"A": 3.0, "S": "x"}
	for _, c := range []struct {
		e    any
		want any
	}{
		{[]any{"match", []any{"get", "S"}, []any{"y", "x"}, 1.0, 2.0}, 1.0},
		{[]any{"match", []any{"to-string", []any{"get", "A"}}, "3", "three", "other"}, "three"},
		{[]any{"step", []any{"get", "A"}, "lo", 3.0, "mid", 4.0, "hi"}, "mid"},
		{[]any{"case", []any{"==", []any{"typeof", []any{"get", "Z"}}, "number"}, "n", "not"}, "not"},
		{[]any{"concat", "a", []any{"get", "Z"}, []any{"get", "A"}}, "a3"},
	} {
		if got := eval(c.e, p); got != c.want {
			t.Errorf("%v = %v, want %v", c.e, got, c.want)
		}
	}
}
