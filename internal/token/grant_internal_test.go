package token

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// Roles and service scopes survive the trip; a token from before roles reads as a read token;
// an unknown role is refused at issue and at check.
func TestGrants(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", MinSecretLen)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	tok, err := s.IssueGrant(Grant{Client: "ops", Role: RoleAdmin, Services: []string{"world"}}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.CheckGrant(tok, now)
	if err != nil || !g.Admin() || g.Client != "ops" || !g.Allows("World") || g.Allows("usa") {
		t.Errorf("admin grant: %+v, %v", g, err)
	}
	read, _ := s.Issue("viewer", now.Add(time.Hour))
	if g, err := s.CheckGrant(read, now); err != nil || g.Admin() || g.Role != RoleRead || !g.Allows("anything") {
		t.Errorf("read grant: %+v, %v", g, err)
	}
	if _, err := s.IssueGrant(Grant{Client: "x", Role: "root"}, now.Add(time.Hour)); err == nil {
		t.Error("a token with role root was issued")
	}
	// A payload from before roles: no role field.
	p := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"old","exp":2000000}`))
	old := p + "." + base64.RawURLEncoding.EncodeToString(s.sign(p))
	if g, err := s.CheckGrant(old, now); err != nil || g.Role != RoleRead {
		t.Errorf("a token without a role: %+v, %v", g, err)
	}
	p = base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"x","role":"root","exp":2000000}`))
	if _, err := s.CheckGrant(p+"."+base64.RawURLEncoding.EncodeToString(s.sign(p)), now); !errors.Is(err, ErrMalformed) {
		t.Errorf("a signed token with role root: %v", err)
	}
}
