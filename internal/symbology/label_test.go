package symbology

import "testing"

func TestParseLabelExpression(t *testing.T) {
	tests := []struct {
		in   string
		want []TextPart
		err  bool
	}{
		{"[NAME]", []TextPart{{Field: "NAME"}}, false},
		{"Pop: [POP] people", []TextPart{{Literal: "Pop: "}, {Field: "POP"}, {Literal: " people"}}, false},
		{"[[x]]", []TextPart{{Literal: "[x]"}}, false},
		{"[NAME", nil, true},
		{"a]", nil, true},
		{"[]", nil, true},
		{"", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseLabelExpression(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
			}
		}
	}
}
