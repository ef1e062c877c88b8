package token_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/token"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestIssueCheck(t *testing.T) {
	s, err := token.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	tok, err := s.Issue("ops-team", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if sub, err := s.Check(tok, now); err != nil || sub != "ops-team" {
		t.Fatalf("check = %q, %v", sub, err)
	}
	if _, err := s.Check(tok, now.Add(time.Hour)); !errors.Is(err, token.ErrExpired) {
		t.Fatalf("expired token: %v", err)
	}
	other, _ := token.NewSigner([]byte(strings.Repeat("x", 32)))
	if _, err := other.Check(tok, now); !errors.Is(err, token.ErrSignature) {
		t.Fatalf("foreign secret: %v", err)
	}
	// Changing the payload (a longer expiry) breaks the signature.
	p, sig, _ := strings.Cut(tok, ".")
	forged := strings.Replace(p, p[len(p)-4:], "AAAA", 1) + "." + sig
	if _, err := s.Check(forged, now); err == nil {
		t.Fatal("forged token accepted")
	}
	for _, bad := range []string{"", "abc", "a.b.c", "!!!.???", tok + "x"} {
		if _, err := s.Check(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := token.NewSigner([]byte("short")); err == nil {
		t.Fatal("short secret accepted")
	}
}
