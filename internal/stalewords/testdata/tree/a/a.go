// Package a is served by a.go and c.go (the second is gone; b.go is b's); see b/b.go and b/c.go, and
// `docs/notes.md` and `docs/gone.md`, and github.com/x/y/z.go, which is another module's.
package a

import (
	"strings"

	"example.com/tree/b"
)

// Do calls [b.Exported] and b.Gone, and b.T.M, and strings.Nothing (another module's package),
// and a.Do and [Do], and a.Missing.
func Do() { b.Exported(); _ = strings.ToUpper("") }

// get returns what the removed function returned.

// Helper is attached to nothing either, but Helper is declared.

// Attachments are stored with the data (English, not a name).

func Helper() {}
