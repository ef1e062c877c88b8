package servicedef_test

import (
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/symbology"

	"github.com/mapfarm/mapfarm/internal/servicedef"
)

func TestLabelFontStyles(t *testing.T) {
	body := good + `            labels:
              - field: NAME
                font: {family: Arial, size: 9, weight: bold, style: italic, decoration: underline}
              - field: NAME
                font: {style: oblique, decoration: line-through}
              - field: NAME
`
	cfg, err := servicedef.Load(writeConfig(t, body), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	ls := cfg.Services[0].Maps[0].Layers[0].Labels
	want := []symbology.Font{
		{Family: "Arial", Size: 9, Bold: true, Italic: true, Underline: true},
		{Family: "DejaVuSans", Size: 8, Italic: true, Strikethrough: true},
		{Family: "DejaVuSans", Size: 8},
	}
	for i, w := range want {
		if ls[i].Font != w {
			t.Errorf("label %d font = %+v, want %+v", i, ls[i].Font, w)
		}
	}
	_, err = servicedef.Load(writeConfig(t, good+`            labels:
              - field: NAME
                font: {weight: heavy}
`), providers.Registry())
	if err == nil || !strings.Contains(err.Error(), `font weight "heavy": want one of normal, bold`) {
		t.Errorf("bad weight: %v", err)
	}
}
