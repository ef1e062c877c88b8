package api

import (
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/token"
)

// testSigner returns a token signer with a secret of the tests.
func testSigner(t *testing.T) *token.Signer {
	t.Helper()
	signer, err := token.NewSigner([]byte(strings.Repeat("s", token.MinSecretLen)))
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// issue returns a token of signer for g that expires in an hour.
func issue(t *testing.T, signer *token.Signer, g token.Grant) string {
	t.Helper()
	tok, err := signer.IssueGrant(g, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
