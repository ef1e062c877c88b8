package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// OutputIDs makes and checks the ids of the images the farm hands out by URL
// (/arcgis/output/<id>.<ext>): 16 random bytes and an 8-byte HMAC-SHA256 tag of them, in hex. An
// id that does not carry a valid tag was never issued by this farm, so the output route answers
// it 404 at once, without asking the store; only a real id whose image is not in the store yet
// (a worker's write still on its way) is waited for. Every api replica of a farm shares the key
// (OutputIDKey keeps it in Redis).
type OutputIDs struct{ key []byte }

// NewOutputIDs returns ids signed with key (at least 16 bytes).
func NewOutputIDs(key []byte) (*OutputIDs, error) {
	if len(key) < 16 {
		return nil, errors.New("api: the output id key must be at least 16 bytes")
	}
	return &OutputIDs{key: append([]byte(nil), key...)}, nil
}

const (
	outputIDRandom = 16
	outputIDTag    = 8
)

// NewID returns a fresh signed id: 48 hex digits.
func (o *OutputIDs) NewID() string {
	b := make([]byte, outputIDRandom, outputIDRandom+outputIDTag)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("api: crypto/rand failed: %v", err)) // the platform's CSPRNG never fails
	}
	return hex.EncodeToString(append(b, o.tag(b)...))
}

// Valid reports whether id is one NewID made with this key, written as NewID writes it: an id
// in other letter case names no output (store keys are case-sensitive), so it is not valid.
func (o *OutputIDs) Valid(id string) bool {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != outputIDRandom+outputIDTag || hex.EncodeToString(b) != id {
		return false
	}
	return hmac.Equal(b[outputIDRandom:], o.tag(b[:outputIDRandom]))
}

func (o *OutputIDs) tag(random []byte) []byte {
	m := hmac.New(sha256.New, o.key)
	m.Write(random)
	return m.Sum(nil)[:outputIDTag]
}

// outputIDKeyName is the Redis key of the farm's output id key.
const outputIDKeyName = "mapfarm:output-id-key"

// OutputIDKey returns the farm's output id key, made (32 random bytes) by the first api of the
// farm to ask and kept in Redis for the others.
func OutputIDKey(ctx context.Context, rdb redis.UniversalClient) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.SetNX(ctx, outputIDKeyName, fresh, 0).Err(); err != nil {
		return nil, fmt.Errorf("api: output id key: %w", err)
	}
	key, err := rdb.Get(ctx, outputIDKeyName).Bytes()
	if err != nil {
		return nil, fmt.Errorf("api: output id key: %w", err)
	}
	return key, nil
}
