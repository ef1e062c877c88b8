package kvp_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/kvp"
)

func TestRead(t *testing.T) {
	for _, c := range []struct {
		query   string
		get     map[string]string // name (any case) → value
		dupName string            // "" when the query is accepted
	}{
		{query: "f=json&where=1%3D1", get: map[string]string{"F": "json", "WHERE": "1=1", "Where": "1=1", "missing": ""}},
		{query: "F=pjson", get: map[string]string{"f": "pjson"}},
		{query: "f=json&f=json&F=json", get: map[string]string{"f": "json"}},
		{query: "where=1%3D1&WHERE=fid%3D1&returnCountOnly=true", dupName: "WHERE"},
		{query: "f=json&F=html", dupName: "F"},
		{query: "TILEROW=0&tilerow=x", dupName: "TILEROW"},
		{query: "layers=1&layers=2", dupName: "layers"},
		{query: "a=&A=x", dupName: "A"},
	} {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		// The same request read many times answers the same (maps iterate at random).
		for range 50 {
			p, err := kvp.Read(v)
			var dup *kvp.DuplicateError
			if c.dupName != "" {
				if !errors.As(err, &dup) || dup.Name != c.dupName {
					t.Fatalf("%s: got %v, %v; want a DuplicateError naming %s", c.query, p, err, c.dupName)
				}
				if !strings.Contains(err.Error(), "parameter "+c.dupName+" is given more than once") {
					t.Fatalf("%s: message %q", c.query, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			for name, want := range c.get {
				if got := p.Get(name); got != want {
					t.Fatalf("%s: Get(%q) = %q, want %q", c.query, name, got, want)
				}
				if p.Has(name) != (want != "") {
					t.Fatalf("%s: Has(%q) = %v", c.query, name, p.Has(name))
				}
			}
		}
	}
}

func TestReadQuotesLongNamesShort(t *testing.T) {
	long := strings.Repeat("Nm", 50_000)
	_, err := kvp.Read(url.Values{long: {"1"}, strings.ToLower(long): {"2"}})
	if err == nil || len(err.Error()) > 700 {
		t.Fatalf("error of %d bytes: %.300v", len(err.Error()), err)
	}
}
