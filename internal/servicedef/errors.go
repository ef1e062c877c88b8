package servicedef

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a service definition file, with where it
// was found. Line and Col are 1-based; 0 means unknown.
type Problem struct {
	File      string
	Line, Col int
	Msg       string
}

// String formats the problem as "file:line:col: message", the form editors
// and compilers use.
func (p Problem) String() string {
	switch {
	case p.Line == 0:
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	case p.Col == 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
}

// ValidationError lists every problem Load found, in file order.
type ValidationError struct {
	Problems []Problem
}

// Error returns one problem per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
