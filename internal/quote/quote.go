// Package quote bounds what error messages and faults repeat of a request: a value quoted in
// a message is cut to MaxLen characters with an ellipsis, so a 7 MB input never comes back
// whole in a fault, a JSON error or a log line.
package quote

import (
	"fmt"
	"unicode/utf8"
)

// MaxLen is the most characters of one request value a message quotes.
const MaxLen = 200

// Ellipsis ends a value that was cut.
const Ellipsis = "…"

// Clip returns s cut to n characters (runes) followed by Ellipsis when it is longer.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + Ellipsis
}

// Args returns args for a message format with every string, []byte, error and fmt.Stringer
// whose text is longer than MaxLen characters replaced by its text cut to MaxLen; other values
// (numbers, short texts) are kept as they are. args itself is not modified.
func Args(args []any) []any {
	var out []any
	for i, a := range args {
		s, ok := text(a)
		if !ok || utf8.RuneCountInString(s) <= MaxLen {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = Clip(s, MaxLen)
	}
	if out == nil {
		return args
	}
	return out
}

// text returns the text fmt would print for a textual value.
func text(a any) (s string, ok bool) {
	defer func() {
		if recover() != nil { // a nil pointer's Error or String: fmt prints <nil>, short
			s, ok = "", false
		}
	}()
	switch v := a.(type) {
	case string:
		return v, true
	case []byte:
		if len(v) <= MaxLen {
			return "", false
		}
		return string(v), true
	case error:
		return v.Error(), true
	case fmt.Stringer:
		return v.String(), true
	}
	return "", false
}

// Sprintf is fmt.Sprintf with its arguments cut by Args.
func Sprintf(format string, args ...any) string {
	return fmt.Sprintf(format, Args(args)...)
}
