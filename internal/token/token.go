// Package token issues and checks access tokens: a client name and an expiry, signed with
// HMAC-SHA256 under a secret the farm's processes share. Any api replica can check a token
// without a database, and rotating the secret revokes every token.
//
// A token reads `<payload>.<signature>`, both unpadded base64url; the payload is JSON
// {"sub": client, "exp": unix seconds}. Issue one with `mapfarm token -client NAME -ttl 720h`.
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

type claims struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
}

// Issue returns a token for client that expires at exp.
func (s *Signer) Issue(client string, exp time.Time) (string, error) {
	if client == "" {
		return "", errors.New("token: the client name is empty")
	}
	payload, err := json.Marshal(claims{Sub: client, Exp: exp.Unix()})
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
	p, sig, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > 4096 {
		return "", ErrMalformed
	}
	want, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", ErrMalformed
	}
	if !hmac.Equal(want, s.sign(p)) {
		return "", ErrSignature
	}
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return "", ErrMalformed
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil || c.Sub == "" {
		return "", ErrMalformed
	}
	if now.Unix() >= c.Exp {
		return "", ErrExpired
	}
	return c.Sub, nil
}
