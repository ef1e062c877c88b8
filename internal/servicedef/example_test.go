package servicedef_test

import (
	"errors"
	"fmt"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

func ExampleLoad() {
	cfg, err := servicedef.Load("../../services/services.yaml", providers.Registry())
	var ve *servicedef.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Println(p) // file:line:col: message
		}
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Services {
		m := s.Maps[0]
		fmt.Printf("%s: map %q in EPSG:%d, %d layers, %d tables\n", s.Name, m.Name, m.SpatialReference.WKID, len(m.Layers), len(m.Tables))
	}
	// Output:
	// world: map "Layers" in EPSG:3857, 2 layers, 0 tables
	// world_geographic: map "Layers" in EPSG:4326, 2 layers, 0 tables
	// usa: map "Layers" in EPSG:3857, 3 layers, 1 tables
	// usa_geographic: map "Layers" in EPSG:4326, 2 layers, 1 tables
}
