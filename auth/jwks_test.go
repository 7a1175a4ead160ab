package auth

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func rsaJWK(kid string, pub *rsa.PublicKey) map[string]any {
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]any{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": enc(pub.N.Bytes()), "e": enc(big.NewInt(int64(pub.E)).Bytes())}
}

func octJWK(kid string, k []byte) map[string]any {
	return map[string]any{"kty": "oct", "kid": kid, "k": base64.RawURLEncoding.EncodeToString(k)}
}

// writeJWKS writes keys to path and gives the file a modification time of
// its own, so a reload sees it changed whatever the file system's clock
// resolution.
func writeJWKS(t *testing.T, path string, mtime time.Time, keys ...map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func withKid(tok string, alg, kid string, signer func(string) []byte) string {
	claims := strings.Split(tok, ".")[1]
	raw, _ := base64.RawURLEncoding.DecodeString(claims)
	return sign(`{"alg":"`+alg+`","kid":"`+kid+`"}`, string(raw), signer)
}

// TestJWKSRotation: tokens are verified by the key their "kid" names; a key
// added to the file verifies once the file changed, a removed one stops.
func TestJWKSRotation(t *testing.T) {
	k1, _ := rsaPair(t)
	k2, _ := rsaPair(t)
	hsKey := []byte("jwks-oct-secret-jwks-oct-secret-")
	path := filepath.Join(t.TempDir(), "jwks.json")
	t0 := time.Now().Add(-time.Hour)
	writeJWKS(t, path, t0, rsaJWK("k1", &k1.PublicKey), octJWK("h1", hsKey))
	ks, err := LoadKeySet(path)
	if err != nil {
		t.Fatal(err)
	}
	ks.CheckEvery = 0 // look at the file on every verification
	var logged []error
	ks.Log = func(err error) { logged = append(logged, err) }
	v := &Verifier{JWKS: ks}
	exp := itoa(time.Now().Add(time.Hour).Unix())
	rs := func(key *rsa.PrivateKey, kid, sub string) string {
		return sign(`{"alg":"RS256","kid":"`+kid+`"}`, `{"sub":"`+sub+`","exp":`+exp+`}`, rsSigner(key))
	}
	hs, err := MintWith(hsKey, 9, time.Hour, MintOptions{KeyID: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	mustVerify := func(tok string, want uint64) {
		t.Helper()
		if id, err := v.Verify(tok); err != nil || id != want {
			t.Fatalf("Verify = %d, %v; want %d", id, err, want)
		}
	}
	mustRefuse := func(tok, want string) {
		t.Helper()
		if _, err := v.Verify(tok); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want one mentioning %q", err, want)
		}
	}
	mustVerify(rs(k1, "k1", "1"), 1)
	mustVerify(hs, 9)
	mustRefuse(rs(k2, "k2", "2"), "key this server does not know")
	mustRefuse(rs(k2, "k1", "2"), "signature")
	// A kid names a key of one algorithm: an HS256 token under an RSA
	// key's kid (the confusion attack through the key set) is refused.
	mustRefuse(withKid(hs, "HS256", "k1", func(s string) []byte { return hs256(k1.PublicKey.N.Bytes(), s) }), "key this server does not know")
	// No kid with only a key set: nothing to choose the key by.
	mustRefuse(sign(`{"alg":"RS256"}`, `{"sub":"1","exp":`+exp+`}`, rsSigner(k1)), "key this server does not know")

	// Rotate: k2 in, k1 out.
	writeJWKS(t, path, t0.Add(time.Minute), rsaJWK("k2", &k2.PublicKey))
	mustVerify(rs(k2, "k2", "2"), 2)
	mustRefuse(rs(k1, "k1", "1"), "key this server does not know")
	mustRefuse(hs, "algorithm") // no HS256 key left at all

	// A broken file keeps the keys read last, and says so in the log.
	if err := os.WriteFile(path, []byte(`{"keys":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, t0.Add(2*time.Minute), t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustVerify(rs(k2, "k2", "2"), 2)
	if len(logged) == 0 {
		t.Fatal("a broken JWKS file was not logged")
	}
}

func TestParseJWKS(t *testing.T) {
	k, _ := rsaPair(t)
	small := octJWK("s", []byte("short"))
	for name, tc := range map[string]struct {
		keys []map[string]any
		want string
	}{
		"empty":        {nil, "no RS256 or HS256"},
		"short secret": {[]map[string]any{small}, "at least 32"},
		"no kid":       {[]map[string]any{rsaJWK("", &k.PublicKey)}, "no \"kid\""},
		"duplicate":    {[]map[string]any{rsaJWK("a", &k.PublicKey), rsaJWK("a", &k.PublicKey)}, "twice"},
		"wrong alg":    {[]map[string]any{{"kty": "oct", "kid": "x", "alg": "HS512", "k": "AAAA"}}, "HS256 only"},
		"only EC":      {[]map[string]any{{"kty": "EC", "kid": "e", "crv": "P-256"}}, "no RS256 or HS256"},
		"small RSA":    {[]map[string]any{{"kty": "RSA", "kid": "r", "n": "AQAB", "e": "AQAB"}}, "at least 2048"},
	} {
		b, _ := json.Marshal(map[string]any{"keys": tc.keys})
		if _, err := parseJWKS(b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, tc.want)
		}
	}
	if _, err := LoadKeySet(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing JWKS file loaded")
	}
}
