package legislative

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// parseQuery reads a raw query string as Django's QueryDict does (and DRF's replace_query_param,
// through Python's parse_qs): pairs split on '&', '+' read as a space, and percent escapes
// decoded leniently: an escape that is not two hex digits stays as written, so "format=%ZZ"
// asks for the format "%ZZ" (which DRF answers with 404), where Go's url.ParseQuery drops the
// pair. Bytes that are not UTF-8 once decoded become U+FFFD, as Python's errors="replace" does.
// Blank values are kept.
func parseQuery(raw string) url.Values {
	q := url.Values{}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k = unquotePlus(k)
		q[k] = append(q[k], unquotePlus(v))
	}
	return q
}

// unquotePlus is Python's urllib.parse.unquote_plus with errors="replace".
func unquotePlus(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
