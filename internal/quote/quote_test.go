package quote

import (
	"errors"
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"ééé", 3, "ééé"},
		{"éééé", 3, "ééé…"},
	}
	for _, tc := range tests {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestSprintf(t *testing.T) {
	long := strings.Repeat("x", 7<<20)
	want := `"` + strings.Repeat("x", MaxLen) + `…"`
	var nilErr *errString
	tests := []struct {
		name   string
		format string
		args   []any
		want   string
	}{
		{"short values kept", "%q %d %v %s", []any{"ab", 7, errors.New("e"), stringer{"s"}}, `"ab" 7 e s`},
		{"long string", "%q is not a number", []any{long}, want + " is not a number"},
		{"long bytes", "%q", []any{[]byte(long)}, want},
		{"long error", "%q", []any{errors.New(long)}, want},
		{"long Stringer", "%q", []any{stringer{long}}, want},
		{"nil pointer error", "%v", []any{nilErr}, "<nil>"},
	}
	for _, tc := range tests {
		if got := Sprintf(tc.format, tc.args...); got != tc.want {
			t.Errorf("%s: %.300q, want %.300q", tc.name, got, tc.want)
		}
	}
	args := []any{long}
	Sprintf("%s", args...)
	if args[0] != long {
		t.Error("Sprintf changed its caller's arguments")
	}
}

type errString struct{ s string }

func (e *errString) Error() string { return e.s }
