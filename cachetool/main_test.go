package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
)

func TestParseLevels(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "", want: nil},
		{in: "3", want: []int{3}},
		{in: "0-3", want: []int{0, 1, 2, 3}},
		{in: "0,2, 5-6", want: []int{0, 2, 5, 6}},
		{in: "3-1", bad: true},
		{in: "x", bad: true},
	}
	for _, tc := range tests {
		got, err := parseLevels(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("parseLevels(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestParseExtent(t *testing.T) {
	if e, err := parseExtent("1,2,3,4"); err != nil || !slices.Equal(e, []float64{1, 2, 3, 4}) {
		t.Errorf("parseExtent = %v, %v", e, err)
	}
	for _, bad := range []string{"1,2,3", "1,2,3,x"} {
		if _, err := parseExtent(bad); err == nil {
			t.Errorf("parseExtent(%q) accepted", bad)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	bar := &progressBar{w: &b, width: 10}
	bar.draw(seed.Status{State: seed.StateRunning, Total: 200, Done: 90, Empty: 10, RatePerSec: 50, ETASeconds: 2})
	bar.draw(seed.Status{State: seed.StateDone, Total: 200, Done: 190, Empty: 10, RatePerSec: 50})
	bar.done()
	out := b.String()
	for _, want := range []string{"\r[#####-----]  50.0%  100/200 tiles  0 failed  50 tiles/s  ETA 2s  running", "\r[##########] 100.0%  200/200 tiles", "done   \n"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"seed", "status", "cancel", "truncate", "info", "verify", "export", "import", "convert"} {
		if !strings.Contains(out.String(), "\n  "+cmd+" ") {
			t.Errorf("usage lacks %s", cmd)
		}
	}
	if err := run(t.Context(), []string{"nope"}, &out, &out); err == nil {
		t.Error("an unknown command was accepted")
	}
}
