package auth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var secret = []byte("s3cret")

func sign(t *testing.T, alg string, claims string, signer func(string) []byte) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	signed := enc([]byte(`{"alg":"`+alg+`","typ":"JWT"}`)) + "." + enc([]byte(claims))
	return signed + "." + enc(signer(signed))
}

func TestMintVerify(t *testing.T) {
	tok, err := Mint(secret, 42, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{HS256Secret: secret}
	if id, err := v.Verify(tok); err != nil || id != 42 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
	if _, err := (&Verifier{HS256Secret: []byte("other")}).Verify(tok); err == nil {
		t.Fatal("wrong secret accepted")
	}
	late := &Verifier{HS256Secret: secret, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}
	if _, err := late.Verify(tok); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired token: err = %v", err)
	}
	if _, err := Mint(nil, 1, time.Hour); err == nil {
		t.Fatal("Mint without secret succeeded")
	}
}

func TestVerifyRefuses(t *testing.T) {
	v := &Verifier{HS256Secret: secret}
	hs := func(s string) []byte { return hs256(secret, s) }
	future := time.Now().Add(time.Hour).Unix()
	for name, tok := range map[string]string{
		"none alg":   sign(t, "none", `{"sub":"1"}`, func(string) []byte { return nil }),
		"not before": sign(t, "HS256", `{"sub":"1","nbf":`+itoa(future)+`}`, hs),
		"bad sub":    sign(t, "HS256", `{"sub":"ann"}`, hs),
		"no sub":     sign(t, "HS256", `{}`, hs),
		"garbage":    "a.b",
		"rs256":      sign(t, "RS256", `{"sub":"1"}`, hs),
	} {
		if _, err := v.Verify(tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := (&Verifier{}).Verify(sign(t, "HS256", `{"sub":"1"}`, hs)); err == nil {
		t.Error("verifier without keys accepted a token")
	}
}

func TestRS256(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub, err := ParseRSAPublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	tok := sign(t, "RS256", `{"sub":"7"}`, func(s string) []byte {
		sum := sha256.Sum256([]byte(s))
		sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		return sig
	})
	if id, err := (&Verifier{RS256Key: pub}).Verify(tok); err != nil || id != 7 {
		t.Fatalf("Verify RS256 = %d, %v", id, err)
	}
	// The HMAC-with-public-key confusion attack must fail.
	forged := sign(t, "HS256", `{"sub":"7"}`, func(s string) []byte { return hs256(der, s) })
	if _, err := (&Verifier{RS256Key: pub}).Verify(forged); err == nil {
		t.Fatal("HS256 token accepted by an RS256-only verifier")
	}
}

func TestResolve(t *testing.T) {
	tok, _ := Mint(secret, 5, time.Hour)
	cfg := Config{DevAuth: true, Verifier: &Verifier{HS256Secret: secret}}
	req := func(h map[string]string) Identity {
		r := httptest.NewRequest("POST", "/query", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return Resolve(cfg, r)
	}
	if id := req(map[string]string{"Authorization": "Bearer " + tok, DevHeader: "9"}); id.ViewerID != 5 {
		t.Fatalf("bearer should win over dev header: %+v", id)
	}
	if id := req(map[string]string{DevHeader: "9"}); id.ViewerID != 9 {
		t.Fatalf("dev header: %+v", id)
	}
	if id := req(map[string]string{DevHeader: "x"}); id.ViewerID != 0 || id.Problem == "" {
		t.Fatalf("bad dev header: %+v", id)
	}
	if id := req(map[string]string{"Authorization": "Basic abc"}); id.ViewerID != 0 || id.Problem == "" {
		t.Fatalf("basic auth: %+v", id)
	}
	cfg.DevAuth = false
	if id := req(map[string]string{DevHeader: "9"}); id.ViewerID != 0 || !strings.Contains(id.Problem, "--dev-auth") {
		t.Fatalf("dev header with dev auth off: %+v", id)
	}
	if id := req(nil); id != (Identity{}) {
		t.Fatalf("anonymous: %+v", id)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
