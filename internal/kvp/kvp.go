// Package kvp reads the key-value parameters of a request (a query string, a form body) the
// way the ArcGIS REST API and the OGC services (WMTS) name them: without regard to letter case,
// so f, F and WHERE, where and Where are one parameter each.
//
// A name must therefore have one value. A request that gives a parameter twice, in the same or
// another letter case, with two different values (where=1=1&WHERE=fid=1, TILEROW=0&tilerow=x)
// is ambiguous: a reader taking either one would answer differently from a cache, a proxy or a
// firewall in front that took the other, and Go's maps made the choice random from one request
// to the next. Read refuses it with a *DuplicateError naming the parameter. The same value
// given twice (f=json in the query string and again in the body) is not ambiguous and is read
// once. Both front ends of tiles and maps (internal/rest, internal/wmts) read their parameters
// here, so they follow one policy; docs/rest.md and docs/wmts.md state it.
package kvp

import (
	"net/url"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/quote"
)

// Params are a request's parameters by name, folded to lower case.
type Params map[string]string

// Get returns the value of the parameter name in any letter case; "" when it is absent.
func (p Params) Get(name string) string { return p[strings.ToLower(name)] }

// Has reports whether the request gives the parameter name, in any letter case.
func (p Params) Has(name string) bool {
	_, ok := p[strings.ToLower(name)]
	return ok
}

// DuplicateError is a parameter given more than once with different values.
type DuplicateError struct {
	// Name is the parameter as the request spelled it first (in sorted order of spellings).
	Name string
	// Spellings are the names it was given under, sorted ("WHERE", "where").
	Spellings []string
}

func (e *DuplicateError) Error() string {
	return quote.Sprintf("the parameter %s is given more than once with different values (as %s); give it once",
		e.Name, strings.Join(e.Spellings, ", "))
}

// Read folds values (url.Values: a query string, a parsed form, or both as http.Request.Form
// holds them) into Params. A parameter given more than once, in any letter case, must have the
// same value each time; otherwise Read returns a *DuplicateError for the first such name in
// sorted order, so that the same request always gets the same answer.
func Read(values url.Values) (Params, error) {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	slices.Sort(names) // deterministic: the map's order must never choose a value or an error
	p := make(Params, len(names))
	spelled := map[string][]string{}
	var dup *DuplicateError
	for _, k := range names {
		lk := strings.ToLower(k)
		for _, v := range values[k] {
			old, seen := p[lk]
			switch {
			case !seen:
				p[lk] = v
			case old != v && dup == nil:
				dup = &DuplicateError{Name: k}
			}
		}
		if len(values[k]) > 0 {
			spelled[lk] = append(spelled[lk], k)
		}
	}
	if dup != nil {
		dup.Spellings = spelled[strings.ToLower(dup.Name)]
		if len(dup.Spellings) > 0 {
			dup.Name = dup.Spellings[0]
		}
		return nil, dup
	}
	return p, nil
}
