package b

// Exported is here; so is T with its method M.
func Exported() {}

type T struct{}

func (T) M() {}
