package stalewords_test

import (
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/stalewords"
)

func TestCheck(t *testing.T) {
	got, err := stalewords.Check("testdata/tree")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.String())
	}
	want := []string{
		`a/a.go:1: "c.go" names a file that does not exist`,
		`a/a.go:1: "b/c.go" names a file that does not exist`,
		`a/a.go:2: "docs/gone.md" names a file that does not exist`,
		`a/a.go:11: "b.Gone" names a declaration that does not exist in example.com/tree/b`,
		`a/a.go:12: "a.Missing" names a declaration that does not exist in example.com/tree/a`,
		`a/a.go:15: "get" begins a comment that describes no declaration`,
		`b/b.go:10: "a.Gone" names a declaration that does not exist in example.com/tree/a`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("findings:\n%q\nwant:\n%q", lines, want)
	}
}

func TestCheckNeedsAModule(t *testing.T) {
	if _, err := stalewords.Check("testdata/tree/a"); err == nil {
		t.Error("Check of a directory without go.mod: no error")
	}
}
