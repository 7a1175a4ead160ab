package auth

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultJWKSCheckEvery is how often a KeySet looks at its file's
// modification time.
const DefaultJWKSCheckEvery = time.Second

// KeySet is a JWKS file (RFC 7517) of verification keys chosen by "kid":
// RS256 keys ("kty":"RSA") and HS256 keys ("kty":"oct"). Keys rotate by
// rewriting the file: a KeySet re-reads it when its modification time or
// size changes, looking at most once every CheckEvery, on the request that
// needs a key. A file that no longer parses is logged (Log) and the keys
// read last stay in use, so a half-written file never locks everyone out.
// Write the new file beside the old and rename it over, so a reader never
// sees it half written.
type KeySet struct {
	path string
	// CheckEvery is the least time between two looks at the file;
	// LoadKeySet sets DefaultJWKSCheckEvery; 0 looks on every lookup.
	CheckEvery time.Duration
	// Log receives reload failures; nil drops them.
	Log func(error)

	cur     atomic.Pointer[keyTable]
	checked atomic.Int64 // unix nanoseconds of the last look at the file

	mu    sync.Mutex // serialises reloads
	mtime time.Time
	size  int64
}

type jwk struct {
	alg string // jwt algorithm this key verifies: HS256 or RS256
	key any    // []byte or *rsa.PublicKey
}

type keyTable struct {
	byKid  map[string]jwk
	hs, rs bool
}

// LoadKeySet reads the JWKS file at path; it fails when the file cannot be
// read, does not parse or holds no usable key.
func LoadKeySet(path string) (*KeySet, error) {
	s := &KeySet{path: path, CheckEvery: DefaultJWKSCheckEvery}
	if err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *KeySet) reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("read JWKS: %w", err)
	}
	if s.cur.Load() != nil && fi.ModTime().Equal(s.mtime) && fi.Size() == s.size {
		return nil
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("read JWKS: %w", err)
	}
	t, err := parseJWKS(b)
	if err != nil {
		return fmt.Errorf("read JWKS %s: %w", s.path, err)
	}
	s.cur.Store(t)
	s.mtime, s.size = fi.ModTime(), fi.Size()
	return nil
}

// refresh re-reads the file when CheckEvery has passed since the last look
// and it changed.
func (s *KeySet) refresh() {
	now := time.Now().UnixNano()
	last := s.checked.Load()
	if now-last < int64(s.CheckEvery) || !s.checked.CompareAndSwap(last, now) {
		return
	}
	if err := s.reload(); err != nil && s.Log != nil {
		s.Log(fmt.Errorf("JWKS reload failed, keeping the keys read before: %w", err))
	}
}

func (s *KeySet) table() *keyTable {
	s.refresh()
	return s.cur.Load()
}

func (s *KeySet) lookup(kid string) (jwk, bool) {
	k, ok := s.table().byKid[kid]
	return k, ok
}

func (s *KeySet) algorithms() (hs, rs bool) {
	t := s.table()
	return t.hs, t.rs
}

// parseJWKS reads a JWK Set. Keys of other types (EC, OKP) or for
// encryption ("use":"enc") are skipped; a key feedd can use must have a
// "kid" unique in the set, an "alg" (when given) matching its type, an
// HS256 secret of at least MinSecretLen bytes and an RSA modulus of at
// least MinRSABits.
func parseJWKS(b []byte) (*keyTable, error) {
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Alg string `json:"alg"`
			Use string `json:"use"`
			K   string `json:"k"`
			N   string `json:"n"`
			E   string `json:"e"`
		} `json:"keys"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("parse JWKS: not a JSON key set: %w", err)
	}
	t := &keyTable{byKid: map[string]jwk{}}
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var key jwk
		switch k.Kty {
		case "oct":
			if k.Alg != "" && k.Alg != "HS256" {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): alg %q; oct keys verify HS256 only", i, k.Kid, k.Alg)
			}
			secret, err := base64.RawURLEncoding.DecodeString(k.K)
			if err != nil {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): \"k\" is not base64url: %w", i, k.Kid, err)
			}
			if len(secret) < MinSecretLen {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): HS256 secret is %d bytes; it must be at least %d", i, k.Kid, len(secret), MinSecretLen)
			}
			key = jwk{alg: "HS256", key: secret}
			t.hs = true
		case "RSA":
			if k.Alg != "" && k.Alg != "RS256" {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): alg %q; RSA keys verify RS256 only", i, k.Kid, k.Alg)
			}
			n, err1 := base64.RawURLEncoding.DecodeString(k.N)
			e, err2 := base64.RawURLEncoding.DecodeString(k.E)
			if err := errors.Join(err1, err2); err != nil || len(e) == 0 || len(e) > 4 {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): \"n\" and \"e\" must be base64url big-endian integers", i, k.Kid)
			}
			pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
			if pub.N.BitLen() < MinRSABits || pub.E < 3 || pub.E%2 == 0 {
				return nil, fmt.Errorf("parse JWKS: key %d (%q): RSA key must have at least %d bits and an odd exponent", i, k.Kid, MinRSABits)
			}
			key = jwk{alg: "RS256", key: pub}
			t.rs = true
		default:
			continue
		}
		if k.Kid == "" {
			return nil, fmt.Errorf("parse JWKS: key %d has no \"kid\"", i)
		}
		if _, dup := t.byKid[k.Kid]; dup {
			return nil, fmt.Errorf("parse JWKS: kid %q appears twice", k.Kid)
		}
		t.byKid[k.Kid] = key
	}
	if len(t.byKid) == 0 {
		return nil, errors.New("parse JWKS: no RS256 or HS256 signing key in the set")
	}
	return t, nil
}
