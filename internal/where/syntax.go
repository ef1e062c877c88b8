package where

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FunctionCategory groups functions the way GetSQLSyntaxInfo reports them.
type FunctionCategory int

// Function categories.
const (
	StringFunction FunctionCategory = iota
	NumericFunction
	DateFunction
	ConversionFunction
)

func (c FunctionCategory) String() string {
	switch c {
	case StringFunction:
		return "String"
	case NumericFunction:
		return "Numeric"
	case DateFunction:
		return "Date"
	case ConversionFunction:
		return "Conversion"
	}
	return "FunctionCategory(" + strconv.Itoa(int(c)) + ")"
}

// funcForm is the call syntax of a function.
type funcForm uint8

const (
	formCall      funcForm = iota // NAME(a, b, ...)
	formNiladic                   // NAME, optionally NAME()
	formSubstring                 // SUBSTRING(s FROM a [FOR b]) or SUBSTRING(s, a [, b])
	formTrim                      // TRIM([BOTH|LEADING|TRAILING] [c] FROM s) or TRIM(s)
	formPosition                  // POSITION(a IN b)
	formExtract                   // EXTRACT(part FROM d)
	formCast                      // CAST(x AS type)
)

// fnID selects a function's evaluation in apply.
type fnID uint8

const (
	fnUpper fnID = iota
	fnLower
	fnCharLength
	fnSubstring
	fnTrim
	fnPosition
	fnConcat
	fnAbs
	fnCeiling
	fnFloor
	fnRound
	fnMod
	fnPower
	fnSqrt
	fnSign
	fnCurrentDate
	fnCurrentTimestamp
	fnExtract
	fnCast
)

// funcDef is one row of the function table.
type funcDef struct {
	id       fnID
	name     string
	aliases  []string
	esri     string // esriSQLFunctionName constant, "" if ArcGIS has none
	cat      FunctionCategory
	form     funcForm
	min, max int // argument counts for formCall; max -1 is unbounded
	usage    string
	volatile bool // result changes between calls; never constant-folded
	// check returns the result type for the argument types, or a message
	// saying which argument is wrong and the index of that argument.
	check func(mod string, args []kind) (kind, int, string)
}

// arity describes the accepted argument count for error messages.
func (f *funcDef) arity() string {
	switch {
	case f.max < 0:
		return "at least " + strconv.Itoa(f.min) + " argument(s)"
	case f.min == f.max:
		return strconv.Itoa(f.min) + " argument(s)"
	}
	return strconv.Itoa(f.min) + " to " + strconv.Itoa(f.max) + " arguments"
}

// functions is the single table of everything the language can call.
// Syntax reports it and the parser and compiler use it, so the two
// cannot drift apart. apply holds the evaluation of each row.
var functions = []*funcDef{
	// String functions.
	{id: fnUpper, name: "UPPER", esri: "esriSQL_UPPER", cat: StringFunction, min: 1, max: 1,
		usage: "UPPER(s)", check: sig(kindString, kindString)},
	{id: fnLower, name: "LOWER", esri: "esriSQL_LOWER", cat: StringFunction, min: 1, max: 1,
		usage: "LOWER(s)", check: sig(kindString, kindString)},
	{id: fnCharLength, name: "CHAR_LENGTH", aliases: []string{"CHARACTER_LENGTH", "LENGTH", "LEN"},
		esri: "esriSQL_CHARLENGTH", cat: StringFunction, min: 1, max: 1,
		usage: "CHAR_LENGTH(s)", check: sig(kindInt, kindString)},
	{id: fnSubstring, name: "SUBSTRING", aliases: []string{"SUBSTR"}, esri: "esriSQL_SUBSTRING",
		cat: StringFunction, form: formSubstring,
		usage: "SUBSTRING(s FROM start [FOR length]) or SUBSTRING(s, start [, length])",
		check: sig(kindString, kindString, kindInt, kindInt)},
	{id: fnTrim, name: "TRIM", esri: "esriSQL_TRIM", cat: StringFunction, form: formTrim,
		usage: "TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) or TRIM(s)",
		check: sig(kindString, kindString, kindString)},
	{id: fnPosition, name: "POSITION", esri: "esriSQL_POSITION", cat: StringFunction, form: formPosition,
		usage: "POSITION(sub IN s)", check: sig(kindInt, kindString, kindString)},
	{id: fnConcat, name: "CONCAT", esri: "esriSQL_CONCAT", cat: StringFunction, min: 1, max: maxCallArgs,
		usage: "CONCAT(a, b, ...)", check: checkConcat},

	// Numeric functions.
	{id: fnAbs, name: "ABS", esri: "esriSQL_ABS", cat: NumericFunction, min: 1, max: 1,
		usage: "ABS(x)", check: sameNum},
	{id: fnCeiling, name: "CEILING", aliases: []string{"CEIL"}, esri: "esriSQL_CEILING", cat: NumericFunction,
		min: 1, max: 1, usage: "CEILING(x)", check: sameNum},
	{id: fnFloor, name: "FLOOR", esri: "esriSQL_FLOOR", cat: NumericFunction, min: 1, max: 1,
		usage: "FLOOR(x)", check: sameNum},
	{id: fnRound, name: "ROUND", esri: "esriSQL_ROUND", cat: NumericFunction, min: 1, max: 2,
		usage: "ROUND(x [, digits])", check: checkRound},
	{id: fnMod, name: "MOD", esri: "esriSQL_MOD", cat: NumericFunction, min: 2, max: 2,
		usage: "MOD(a, b)", check: checkArith},
	{id: fnPower, name: "POWER", esri: "esriSQL_POWER", cat: NumericFunction, min: 2, max: 2,
		usage: "POWER(x, y)", check: sig(kindFloat, kindFloat, kindFloat)},
	{id: fnSqrt, name: "SQRT", cat: NumericFunction, min: 1, max: 1,
		usage: "SQRT(x)", check: sig(kindFloat, kindFloat)},
	{id: fnSign, name: "SIGN", esri: "esriSQL_SIGN", cat: NumericFunction, min: 1, max: 1,
		usage: "SIGN(x)", check: sig(kindInt, kindFloat)},

	// Date functions.
	{id: fnCurrentDate, name: "CURRENT_DATE", esri: "esriSQL_CURRENTDATE", cat: DateFunction, form: formNiladic,
		usage: "CURRENT_DATE", volatile: true, check: sig(kindDate)},
	{id: fnCurrentTimestamp, name: "CURRENT_TIMESTAMP", esri: "esriSQL_CURRENTTIMESTAMP", cat: DateFunction,
		form: formNiladic, usage: "CURRENT_TIMESTAMP", volatile: true, check: sig(kindDate)},
	{id: fnExtract, name: "EXTRACT", esri: "esriSQL_EXTRACT", cat: DateFunction, form: formExtract,
		usage: "EXTRACT(YEAR|MONTH|DAY|HOUR|MINUTE|SECOND FROM d)", check: sig(kindInt, kindDate)},

	// Conversion.
	{id: fnCast, name: "CAST", esri: "esriSQL_CAST", cat: ConversionFunction, form: formCast,
		usage: "CAST(x AS INTEGER|FLOAT|CHAR|DATE|TIMESTAMP)", check: checkCast},
}

// maxCallArgs bounds the argument count of any call (CONCAT is the only
// function that takes more than three), so argument values fit a fixed
// array and evaluation does not allocate.
const maxCallArgs = 8

// apply evaluates function id on evaluated arguments. NULL handling is
// per function: most give NULL for any NULL argument; CONCAT skips NULLs.
// It is one switch with direct calls so that the argument slice, which
// lives on the caller's stack, does not escape.
func apply(id fnID, mod string, a []value, now time.Time) value {
	switch id {
	case fnConcat:
		var b strings.Builder
		for _, v := range a {
			b.WriteString(toText(v))
		}
		return strValue(b.String())
	case fnCurrentDate:
		y, m, d := now.UTC().Date()
		return dateValue(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
	case fnCurrentTimestamp:
		return dateValue(now.UTC())
	case fnTrim:
		return evalTrim(mod, a)
	case fnRound:
		return evalRound(a)
	}
	for _, v := range a {
		if v.k == kindNull {
			return nullValue
		}
	}
	switch id {
	case fnUpper:
		return strValue(strings.ToUpper(a[0].s))
	case fnLower:
		return strValue(strings.ToLower(a[0].s))
	case fnCharLength:
		return intValue(int64(utf8.RuneCountInString(a[0].s)))
	case fnSubstring:
		return evalSubstring(a)
	case fnPosition:
		i := strings.Index(a[1].s, a[0].s)
		if i < 0 {
			return intValue(0)
		}
		return intValue(int64(utf8.RuneCountInString(a[1].s[:i]) + 1))
	case fnAbs:
		if a[0].k == kindFloat {
			return floatValue(math.Abs(a[0].f))
		}
		if a[0].i == math.MinInt64 {
			return floatValue(-float64(a[0].i))
		}
		if a[0].i < 0 {
			return intValue(-a[0].i)
		}
		return a[0]
	case fnCeiling:
		if a[0].k == kindFloat {
			return floatValue(math.Ceil(a[0].f))
		}
		return a[0]
	case fnFloor:
		if a[0].k == kindFloat {
			return floatValue(math.Floor(a[0].f))
		}
		return a[0]
	case fnMod:
		return evalMod(a)
	case fnPower:
		return floatResult(math.Pow(a[0].num(), a[1].num()))
	case fnSqrt:
		return floatResult(math.Sqrt(a[0].num()))
	case fnSign:
		switch n := a[0].num(); {
		case n > 0:
			return intValue(1)
		case n < 0:
			return intValue(-1)
		}
		return intValue(0)
	case fnExtract:
		return evalExtract(mod, a[0])
	case fnCast:
		return evalCast(mod, a[0])
	}
	return nullValue
}

// funcByName indexes functions by name and alias.
var funcByName = func() map[string]*funcDef {
	m := make(map[string]*funcDef)
	for _, f := range functions {
		m[f.name] = f
		for _, a := range f.aliases {
			m[a] = f
		}
	}
	return m
}()

func lookupFunc(upper string) *funcDef { return funcByName[upper] }

// --- type checking helpers ---

// fits reports whether an argument of kind got may be passed where want
// is expected. kindFloat as want means "any number"; NULL fits anything.
func fits(got, want kind) bool {
	switch {
	case got == kindNull || got == want:
		return true
	case want == kindFloat || want == kindInt:
		return got == kindInt || got == kindFloat
	}
	return false
}

func kindName(k kind) string {
	switch k {
	case kindNull:
		return "NULL"
	case kindInt:
		return "Integer"
	case kindFloat:
		return "Double"
	case kindString:
		return "String"
	case kindDate:
		return "Date"
	case kindBool:
		return "Boolean"
	}
	return "?"
}

func wantName(k kind) string {
	if k == kindInt || k == kindFloat {
		return "a number"
	}
	return "a " + kindName(k)
}

// sig builds a checker for fixed argument kinds.
func sig(result kind, params ...kind) func(string, []kind) (kind, int, string) {
	return func(_ string, args []kind) (kind, int, string) {
		for i, a := range args {
			if i < len(params) && !fits(a, params[i]) {
				return 0, i, "argument " + strconv.Itoa(i+1) + " must be " + wantName(params[i]) + ", not " + kindName(a)
			}
		}
		return result, 0, ""
	}
}

// sameNum: one numeric argument; the result has its type.
func sameNum(_ string, args []kind) (kind, int, string) {
	if !fits(args[0], kindFloat) {
		return 0, 0, "argument must be a number, not " + kindName(args[0])
	}
	if args[0] == kindFloat {
		return kindFloat, 0, ""
	}
	return kindInt, 0, ""
}

func checkRound(mod string, args []kind) (kind, int, string) {
	if len(args) > 1 && !fits(args[1], kindInt) {
		return 0, 1, "digits must be a number, not " + kindName(args[1])
	}
	return sameNum(mod, args[:1])
}

// checkArith: two numbers; integer result when both are integers.
func checkArith(_ string, args []kind) (kind, int, string) {
	res := kindInt
	for i, a := range args {
		if !fits(a, kindFloat) {
			return 0, i, "argument " + strconv.Itoa(i+1) + " must be a number, not " + kindName(a)
		}
		if a == kindFloat {
			res = kindFloat
		}
	}
	return res, 0, ""
}

func checkConcat(_ string, args []kind) (kind, int, string) {
	for i, a := range args {
		if a == kindBool {
			return 0, i, "argument " + strconv.Itoa(i+1) + " must not be Boolean"
		}
	}
	return kindString, 0, ""
}

func checkCast(mod string, args []kind) (kind, int, string) {
	if args[0] == kindBool {
		return 0, 0, "cannot CAST a Boolean"
	}
	switch mod {
	case "INTEGER":
		if args[0] == kindDate {
			return 0, 0, "cannot CAST a Date to INTEGER"
		}
		return kindInt, 0, ""
	case "FLOAT":
		if args[0] == kindDate {
			return 0, 0, "cannot CAST a Date to FLOAT"
		}
		return kindFloat, 0, ""
	case "CHAR":
		return kindString, 0, ""
	}
	if args[0] == kindInt || args[0] == kindFloat {
		return 0, 0, "cannot CAST a number to " + mod
	}
	return kindDate, 0, ""
}

// --- evaluation helpers ---

// floatResult turns NaN and infinities into NULL.
func floatResult(f float64) value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nullValue
	}
	return floatValue(f)
}

// toInt converts a numeric value to an integer, truncating toward zero.
func toInt(v value) (int64, bool) {
	if v.k == kindInt {
		return v.i, true
	}
	if v.k != kindFloat || math.IsNaN(v.f) || v.f >= 9.223372036854775807e18 || v.f < -9.223372036854775808e18 {
		return 0, false
	}
	return int64(v.f), true
}

// evalSubstring follows SQL-92: characters start .. start+length-1,
// counted from 1; positions before 1 are simply not there. A negative
// length gives NULL.
func evalSubstring(a []value) value {
	start, ok := toInt(a[1])
	if !ok {
		return nullValue
	}
	s := a[0].s
	n := int64(utf8.RuneCountInString(s))
	end := n + 1 // exclusive, 1-based
	if len(a) > 2 {
		l, ok := toInt(a[2])
		if !ok || l < 0 {
			return nullValue
		}
		if start <= math.MaxInt64-l && start+l < end {
			end = start + l
		}
	}
	if start < 1 {
		start = 1
	}
	if start >= end {
		return strValue("")
	}
	var b strings.Builder
	var i int64 = 1
	for _, r := range s {
		if i >= end {
			break
		}
		if i >= start {
			b.WriteRune(r)
		}
		i++
	}
	return strValue(b.String())
}

func evalTrim(mod string, a []value) value {
	if a[0].k == kindNull {
		return nullValue
	}
	cut := " "
	if len(a) > 1 {
		if a[1].k == kindNull {
			return nullValue
		}
		cut = a[1].s
	}
	s := a[0].s
	if cut == "" {
		return strValue(s)
	}
	switch mod {
	case "LEADING":
		s = strings.TrimLeft(s, cut)
	case "TRAILING":
		s = strings.TrimRight(s, cut)
	default:
		s = strings.Trim(s, cut)
	}
	return strValue(s)
}

func evalRound(a []value) value {
	if a[0].k == kindNull || (len(a) > 1 && a[1].k == kindNull) {
		return nullValue
	}
	var digits int64
	if len(a) > 1 {
		d, ok := toInt(a[1])
		if !ok {
			return nullValue
		}
		digits = max(-30, min(d, 30))
	}
	if a[0].k == kindInt {
		if digits >= 0 {
			return a[0]
		}
		p := math.Pow10(int(-digits))
		r := math.Round(float64(a[0].i)/p) * p
		if i, ok := toInt(floatValue(r)); ok {
			return intValue(i)
		}
		return nullValue
	}
	p := math.Pow10(int(digits))
	return floatResult(math.Round(a[0].f*p) / p)
}

func evalMod(a []value) value {
	if a[0].k == kindInt && a[1].k == kindInt {
		if a[1].i == 0 {
			return nullValue
		}
		if a[1].i == -1 {
			return intValue(0)
		}
		return intValue(a[0].i % a[1].i)
	}
	return floatResult(math.Mod(a[0].num(), a[1].num()))
}

func evalExtract(mod string, v value) value {
	if v.k != kindDate {
		return nullValue
	}
	t := v.time()
	switch mod {
	case "YEAR":
		return intValue(int64(t.Year()))
	case "MONTH":
		return intValue(int64(t.Month()))
	case "DAY":
		return intValue(int64(t.Day()))
	case "HOUR":
		return intValue(int64(t.Hour()))
	case "MINUTE":
		return intValue(int64(t.Minute()))
	}
	return intValue(int64(t.Second()))
}

// toText is the text form of a value for CONCAT, || and CAST AS CHAR.
// NULL becomes the empty string (CONCAT skips NULLs).
func toText(v value) string {
	switch v.k {
	case kindString:
		return v.s
	case kindInt:
		return strconv.FormatInt(v.i, 10)
	case kindFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case kindDate:
		return formatTime(v.time())
	case kindBool:
		if v.i != 0 {
			return "TRUE"
		}
		return "FALSE"
	}
	return ""
}

// evalCast converts; text that does not convert gives NULL. Floats cast to
// INTEGER truncate toward zero; DATE drops the time of day.
func evalCast(mod string, v value) value {
	switch mod {
	case "INTEGER":
		if v.k == kindString {
			s := strings.TrimSpace(v.s)
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return intValue(i)
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nullValue
			}
			v = floatValue(f)
		}
		if i, ok := toInt(v); ok {
			return intValue(i)
		}
		return nullValue
	case "FLOAT":
		if v.k == kindString {
			f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
			if err != nil {
				return nullValue
			}
			return floatResult(f)
		}
		return floatValue(v.num())
	case "CHAR":
		return strValue(toText(v))
	}
	t := v.time()
	if v.k == kindString {
		var ok bool
		if t, ok = parseDateText(v.s); !ok {
			return nullValue
		}
	}
	if mod == "DATE" {
		y, m, d := t.UTC().Date()
		t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	return dateValue(t)
}

// --- GetSQLSyntaxInfo ---

// FunctionInfo describes one function of the language.
type FunctionInfo struct {
	Name     string           // canonical name, as String prints it
	Aliases  []string         // other accepted names
	ESRIName string           // esriSQLFunctionName constant; "" when ArcGIS has none
	Category FunctionCategory // String, Numeric, Date or Conversion
	Usage    string           // call syntax
}

// Property is one key/value pair of an ArcGIS PropertySet.
type Property struct {
	Key   string
	Value string
}

// SyntaxInfo describes exactly what the where-clause language accepts, in
// the shape of the SOAP SQLSyntaxInfo type.
type SyntaxInfo struct {
	// Functions lists every function, in table order.
	Functions []FunctionInfo
	// FunctionNames maps esriSQLFunctionName constants (or, for functions
	// ArcGIS has no constant for, the name itself) to the name to write.
	// It includes the esriSQL_LEADING and esriSQL_TRAILING TRIM keywords.
	FunctionNames []Property
	// Function names by category.
	StringFunctions     []string
	NumericFunctions    []string
	DateFunctions       []string
	ConversionFunctions []string
	// SpecialCharacters maps esriSQLSpecialCharacters constants to their
	// characters, plus StringDelimiter and LikeEscapeKeyword.
	SpecialCharacters []Property
	// SupportedPredicates lists esriSQLPredicates constants.
	SupportedPredicates []string
	// SupportedClauses is empty: a where clause has no ORDER BY or other
	// clauses of its own.
	SupportedClauses []string
	// Keywords lists every word with a meaning of its own: reserved words,
	// words of special function forms and function names.
	Keywords []string
	// IdentifierCase is false: bare field names match case-insensitively.
	IdentifierCase bool
	// DelimitedIdentifierCase is false: "quoted" names also match
	// case-insensitively (an exact-case match wins).
	DelimitedIdentifierCase bool
	// StringComparisonCase is true: = < LIKE and IN on strings are
	// case-sensitive. Use UPPER or LOWER for case-blind matching.
	StringComparisonCase bool
	// InvalidCharacters may not appear in a bare field name.
	InvalidCharacters string
	// InvalidStartingCharacters may not start a bare field name.
	InvalidStartingCharacters string
}

// Syntax reports the language Parse accepts. The result is freshly
// allocated; callers may modify it.
func Syntax() SyntaxInfo {
	s := SyntaxInfo{
		SpecialCharacters: []Property{
			{"esriSQL_WildcardManyMatch", "%"},
			{"esriSQL_WildcardSingleMatch", "_"},
			{"esriSQL_DelimitedIdentifierPrefix", `"`},
			{"esriSQL_DelimitedIdentifierSuffix", `"`},
			{"esriSQL_EscapeKeyPrefix", ""},
			{"esriSQL_EscapeKeySuffix", ""},
			{"StringDelimiter", "'"},
			{"LikeEscapeKeyword", "ESCAPE"},
		},
		SupportedPredicates: []string{
			"esriSQL_EQ", "esriSQL_NOT_EQ", "esriSQL_LT", "esriSQL_GT", "esriSQL_LE", "esriSQL_GE",
			"esriSQL_BETWEEN", "esriSQL_NOT_BETWEEN", "esriSQL_IN", "esriSQL_NOT_IN",
			"esriSQL_LIKE", "esriSQL_NOT_LIKE", "esriSQL_IS_NULL", "esriSQL_IS_NOT_NULL",
		},
		SupportedClauses:          []string{},
		IdentifierCase:            false,
		DelimitedIdentifierCase:   false,
		StringComparisonCase:      true,
		InvalidCharacters:         " `~!@#$%^&*()-+=|\\{}[]:;\"'<>,.?/",
		InvalidStartingCharacters: "0123456789",
	}
	keywords := map[string]bool{}
	for w := range reserved {
		keywords[w] = true
	}
	for w := range extractParts {
		keywords[w] = true
	}
	for w := range castTypes {
		keywords[w] = true
	}
	for _, f := range functions {
		s.Functions = append(s.Functions, FunctionInfo{
			Name: f.name, Aliases: slices.Clone(f.aliases), ESRIName: f.esri, Category: f.cat, Usage: f.usage,
		})
		key := f.esri
		if key == "" {
			key = f.name
		}
		s.FunctionNames = append(s.FunctionNames, Property{key, f.name})
		if f.name == "TRIM" {
			s.FunctionNames = append(s.FunctionNames,
				Property{"esriSQL_LEADING", "LEADING"}, Property{"esriSQL_TRAILING", "TRAILING"})
		}
		switch f.cat {
		case StringFunction:
			s.StringFunctions = append(s.StringFunctions, f.name)
		case NumericFunction:
			s.NumericFunctions = append(s.NumericFunctions, f.name)
		case DateFunction:
			s.DateFunctions = append(s.DateFunctions, f.name)
		case ConversionFunction:
			s.ConversionFunctions = append(s.ConversionFunctions, f.name)
		}
		keywords[f.name] = true
		for _, a := range f.aliases {
			keywords[a] = true
		}
	}
	for w := range keywords {
		s.Keywords = append(s.Keywords, w)
	}
	slices.Sort(s.Keywords)
	return s
}
