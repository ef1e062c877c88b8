//go:build !proj

package proj

import "fmt"

// builtinEngine is the engine of a build without PROJ: WGS 84 and Web Mercator only, which
// Systems handles before asking an engine, so anything that reaches it is unsupported.
type builtinEngine struct{}

func newEngine() engine { return builtinEngine{} }

func (builtinEngine) describe(sr SR) (CRS, error) {
	return CRS{}, fmt.Errorf("%w: %s is not supported by this server (it knows WKID 4326 and Web Mercator 3857/102100 only; "+
		"a build with PROJ knows every EPSG and Esri system)", ErrUnsupported, sr.Name())
}

func (builtinEngine) operation(from, to CRS) (operation, error) {
	return nil, fmt.Errorf("%w: %s to %s", ErrUnsupported, from.SR.Name(), to.SR.Name())
}
