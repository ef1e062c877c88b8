package where

import (
	"cmp"
	"math"
	"strings"
	"time"
)

// kind is the dynamic type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindInt
	kindFloat
	kindString
	kindDate
	kindBool
)

// value is a dynamically typed SQL value. It is passed by value so that
// evaluation does not allocate, and kept small because it is copied a lot.
// Booleans use i (0 or 1); dates use i for Unix seconds and ns for the
// nanoseconds within the second.
type value struct {
	k  kind
	ns int32
	i  int64
	f  float64
	s  string
}

var nullValue = value{}

func intValue(i int64) value     { return value{k: kindInt, i: i} }
func floatValue(f float64) value { return value{k: kindFloat, f: f} }
func strValue(s string) value    { return value{k: kindString, s: s} }
func dateValue(t time.Time) value {
	return value{k: kindDate, i: t.Unix(), ns: int32(t.Nanosecond())}
}

// time returns a date value as a UTC time.
func (v value) time() time.Time { return time.Unix(v.i, int64(v.ns)).UTC() }
func boolValue(b bool) value {
	if b {
		return value{k: kindBool, i: 1}
	}
	return value{k: kindBool}
}

// fromAny converts a row cell. Values of types Match does not know are
// treated as NULL.
func fromAny(x any) value {
	switch v := x.(type) {
	case nil:
		return nullValue
	case int64:
		return intValue(v)
	case float64:
		if math.IsNaN(v) {
			return nullValue
		}
		return floatValue(v)
	case string:
		return strValue(v)
	case time.Time:
		return dateValue(v)
	case bool:
		return boolValue(v)
	case int:
		return intValue(int64(v))
	case int32:
		return intValue(int64(v))
	case int16:
		return intValue(int64(v))
	case int8:
		return intValue(int64(v))
	case uint8:
		return intValue(int64(v))
	case uint16:
		return intValue(int64(v))
	case uint32:
		return intValue(int64(v))
	case uint64:
		if v > math.MaxInt64 {
			return floatValue(float64(v))
		}
		return intValue(int64(v))
	case uint:
		if uint64(v) > math.MaxInt64 {
			return floatValue(float64(v))
		}
		return intValue(int64(v))
	case float32:
		if v != v {
			return nullValue
		}
		return floatValue(float64(v))
	case []byte:
		return strValue(string(v))
	case *time.Time:
		if v == nil {
			return nullValue
		}
		return dateValue(*v)
	}
	return nullValue
}

// num returns a numeric value as float64.
func (v value) num() float64 {
	if v.k == kindInt {
		return float64(v.i)
	}
	return v.f
}

func (v value) isNum() bool { return v.k == kindInt || v.k == kindFloat }

// tri is a SQL truth value.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (t tri) not() tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triUnknown
}

// compareValues orders two non-NULL values. ok is false when they are of
// incomparable kinds.
func compareValues(a, b value) (c int, ok bool) {
	switch {
	case a.k == kindInt && b.k == kindInt:
		return cmp.Compare(a.i, b.i), true
	case a.isNum() && b.isNum():
		return cmp.Compare(a.num(), b.num()), true
	case a.k == kindString && b.k == kindString:
		return strings.Compare(a.s, b.s), true
	case a.k == kindDate && b.k == kindDate:
		if c := cmp.Compare(a.i, b.i); c != 0 {
			return c, true
		}
		return cmp.Compare(int64(a.ns), int64(b.ns)), true
	case a.k == kindBool && b.k == kindBool:
		return cmp.Compare(a.i, b.i), true
	}
	return 0, false
}

// cmpResult turns an ordering into the truth of a comparison operator.
func cmpResult(op binOp, c int) tri {
	switch op {
	case opEq:
		return triOf(c == 0)
	case opNe:
		return triOf(c != 0)
	case opLt:
		return triOf(c < 0)
	case opLe:
		return triOf(c <= 0)
	case opGt:
		return triOf(c > 0)
	case opGe:
		return triOf(c >= 0)
	}
	return triUnknown
}

// compareTri applies a comparison operator with SQL NULL semantics.
func compareTri(op binOp, a, b value) tri {
	if a.k == kindNull || b.k == kindNull {
		return triUnknown
	}
	c, ok := compareValues(a, b)
	if !ok {
		return triUnknown
	}
	return cmpResult(op, c)
}

// flip returns the operator that gives the same result with the operands
// swapped.
func (o binOp) flip() binOp {
	switch o {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return o
}
