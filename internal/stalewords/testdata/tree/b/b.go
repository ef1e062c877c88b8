package b

// Exported is here; so is T with its method M.
func Exported() {}

type T struct{}

func (T) M() {}

// Helper of b: see a.Do and a.Gone (a is not imported here, but is the module's only package
// a), and in an example:
//
//	a := T{}
//	a.Gone()
func Helper() {}
