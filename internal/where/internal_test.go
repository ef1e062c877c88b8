package where

import (
	"errors"
	"strings"
	"testing"
)

// The clause length limit keeps real clauses well below MaxInList items,
// so the IN-list limit is exercised with the length limit lifted.
func TestInListLimit(t *testing.T) {
	e, err := parse(InListClause("ID", MaxInList), 1<<30)
	if err != nil {
		t.Fatalf("%d items: %v", MaxInList, err)
	}
	p, err := e.Compile(Schema{{Name: "ID", Type: Integer}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Match([]any{int64(MaxInList - 1)}) || p.Match([]any{int64(MaxInList)}) {
		t.Error("wrong membership")
	}
	_, err = parse(InListClause("ID", MaxInList+1), 1<<30)
	var se *SyntaxError
	if !errors.Is(err, ErrLimit) || !errors.As(err, &se) {
		t.Fatalf("%d items: got %v, want a limit error", MaxInList+1, err)
	}
	if !strings.Contains(se.Msg, "IN list has more than 100000 items") {
		t.Errorf("message %q", se.Msg)
	}
}

func TestLikeMatcher(t *testing.T) {
	tests := []struct {
		pattern string
		esc     rune
		s       string
		want    bool
	}{
		{"", -1, "", true},
		{"", -1, "a", false},
		{"%", -1, "", true},
		{"%%", -1, "abc", true},
		{"_", -1, "é", true},
		{"_", -1, "ab", false},
		{"a%", -1, "abc", true},
		{"%c", -1, "abc", true},
		{"%b%", -1, "abc", true},
		{"a%c", -1, "abc", true},
		{"a%c", -1, "abcd", false},
		{"a_c", -1, "abc", true},
		{"%a%b%c%", -1, "xxaxxbxxcxx", true},
		{"%a%b%c%", -1, "xxaxxcxxbxx", false},
		{"%aab", -1, "aaab", true},
		{"a%a%a", -1, "aaaa", true},
		{"a%a%a", -1, "aa", false},
		{"_%_", -1, "a", false},
		{"_%_", -1, "ab", true},
		{"100!%", '!', "100%", true},
		{"100!%", '!', "1000", false},
		{"a!!b", '!', "a!b", true},
		{"ab!", '!', "ab!", false}, // trailing escape matches nothing
		{"%é_", -1, "café!", true},
		{"%" + strings.Repeat("a%", 20) + "b", -1, strings.Repeat("a", 40), false},
	}
	for _, tc := range tests {
		if got := newLikeMatcher(tc.pattern, tc.esc).match(tc.s); got != tc.want {
			t.Errorf("%q LIKE %q (esc %q) = %v, want %v", tc.s, tc.pattern, tc.esc, got, tc.want)
		}
	}
}
