package where

import (
	"errors"
	"fmt"
)

// ErrLimit is wrapped by the *SyntaxError returned when a clause exceeds
// MaxClauseLen, MaxDepth or MaxInList, and by the error of Compile for a
// LIKE pattern over MaxLikePattern. Test for it with errors.Is.
var ErrLimit = errors.New("where: limit exceeded")

// SyntaxError reports a clause that does not parse.
type SyntaxError struct {
	Pos int    // byte offset into the clause, 0-based
	Msg string // what was wrong, e.g. "expected ')' but found 'AND'"
	err error  // ErrLimit for limit violations, else nil
}

func (e *SyntaxError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("where: over a limit at position %d: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("where: syntax error at position %d: %s", e.Pos, e.Msg)
}

// Unwrap returns ErrLimit when the error is a limit violation.
func (e *SyntaxError) Unwrap() error { return e.err }

func syntaxErr(pos int, msg string) *SyntaxError {
	return &SyntaxError{Pos: pos, Msg: msg}
}

func limitErr(pos int, msg string) *SyntaxError {
	return &SyntaxError{Pos: pos, Msg: msg, err: ErrLimit}
}

// FieldError reports a field name that the schema does not have.
type FieldError struct {
	Pos   int    // byte offset of the name in the clause
	Field string // the name as written (delimiters removed)
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("where: unknown field %q at position %d", e.Field, e.Pos)
}

// TypeError reports an expression whose operand types do not fit, found
// when the clause is compiled against a schema, e.g. comparing a string
// field with a number, or a LIKE escape that is not one character.
type TypeError struct {
	Pos int
	Msg string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("where: type error at position %d: %s", e.Pos, e.Msg)
}

func typeErr(pos int, format string, args ...any) *TypeError {
	return &TypeError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
