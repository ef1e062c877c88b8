// Package token issues and checks access tokens: a client name, a role, optionally the services
// it may use, and an expiry, signed with HMAC-SHA256 under a secret the farm's processes share.
// Any api replica can check a token without a database, and rotating the secret revokes every
// token.
//
// A token reads `<payload>.<signature>`, both unpadded base64url; the payload is JSON
// {"sub": client, "role": "read"|"admin", "svc": [services], "exp": unix seconds}. A token
// without a role (issued before roles existed) reads as RoleRead. Issue one with
// `mapfarm token -client NAME -role admin -services world,usa -ttl 720h`.
package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors of Check. They say what is wrong without revealing anything of the secret.
var (
	ErrMalformed = errors.New("token: malformed")
	ErrSignature = errors.New("token: invalid signature")
	ErrExpired   = errors.New("token: expired")
)

// MinSecretLen is the shortest accepted signing secret.
const MinSecretLen = 32

// Signer issues and checks tokens.
type Signer struct{ secret []byte }

// NewSigner returns a signer; the secret must be at least MinSecretLen bytes.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("token: the secret must be at least %d bytes", MinSecretLen)
	}
	return &Signer{secret: append([]byte(nil), secret...)}, nil
}

// Roles. A read token calls the map services and the JSON API; an admin token may also use the
// admin routes (seeding jobs), which write and delete tiles.
const (
	RoleRead  = "read"
	RoleAdmin = "admin"
)

// Grant is what a token allows: who, in which role, on which services (none: all).
type Grant struct {
	Client   string
	Role     string
	Services []string
}

// Admin reports whether the grant may use the admin routes.
func (g Grant) Admin() bool { return g.Role == RoleAdmin }

// Allows reports whether the grant covers the map service named service.
func (g Grant) Allows(service string) bool {
	if len(g.Services) == 0 {
		return true
	}
	for _, s := range g.Services {
		if strings.EqualFold(s, service) {
			return true
		}
	}
	return false
}

type claims struct {
	Sub  string   `json:"sub"`
	Role string   `json:"role,omitempty"`
	Svc  []string `json:"svc,omitempty"`
	Exp  int64    `json:"exp"`
}

// Issue returns a read token for client, on every service, that expires at exp.
func (s *Signer) Issue(client string, exp time.Time) (string, error) {
	return s.IssueGrant(Grant{Client: client, Role: RoleRead}, exp)
}

// IssueGrant returns a token for g that expires at exp.
func (s *Signer) IssueGrant(g Grant, exp time.Time) (string, error) {
	if g.Client == "" {
		return "", errors.New("token: the client name is empty")
	}
	if g.Role != RoleRead && g.Role != RoleAdmin {
		return "", fmt.Errorf("token: role %q is neither %q nor %q", g.Role, RoleRead, RoleAdmin)
	}
	payload, err := json.Marshal(claims{Sub: g.Client, Role: g.Role, Svc: g.Services, Exp: exp.Unix()})
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(s.sign(p)), nil
}

func (s *Signer) sign(payload string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Check verifies a token at time now and returns its client name.
func (s *Signer) Check(tok string, now time.Time) (string, error) {
	g, err := s.CheckGrant(tok, now)
	return g.Client, err
}

// CheckGrant verifies a token at time now and returns what it grants.
func (s *Signer) CheckGrant(tok string, now time.Time) (Grant, error) {
	p, sig, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > 4096 {
		return Grant{}, ErrMalformed
	}
	want, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Grant{}, ErrMalformed
	}
	if !hmac.Equal(want, s.sign(p)) {
		return Grant{}, ErrSignature
	}
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Grant{}, ErrMalformed
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil || c.Sub == "" {
		return Grant{}, ErrMalformed
	}
	if now.Unix() >= c.Exp {
		return Grant{}, ErrExpired
	}
	role := c.Role
	switch role {
	case "":
		role = RoleRead
	case RoleRead, RoleAdmin:
	default:
		return Grant{}, ErrMalformed
	}
	return Grant{Client: c.Sub, Role: role, Services: c.Svc}, nil
}
