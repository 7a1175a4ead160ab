package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token minted by `feedd token` with --jwt-issuer and --jwt-audience is
// accepted by a server configured with the same, and refused by one
// expecting another audience.
func TestTokenIssuerAudience(t *testing.T) {
	var out bytes.Buffer
	if err := runToken(context.Background(), []string{"--user", "42", "--jwt-secret", testSecret,
		"--jwt-issuer", "https://id.example", "--jwt-audience", "feedd"}, cmdOptions{stdout: &out}); err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(out.String())
	verifier := func(args ...string) func(string) (uint64, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		j := addJWTFlags(fs)
		if _, err := parse(fs, args); err != nil {
			t.Fatal(err)
		}
		v, err := j.verifier()
		if err != nil {
			t.Fatal(err)
		}
		return v.Verify
	}
	if id, err := verifier("--jwt-secret", testSecret, "--jwt-issuer", "https://id.example", "--jwt-audience", "feedd")(tok); err != nil || id != 42 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
	t.Setenv("FEED_JWT_AUDIENCE", "other")
	if _, err := verifier("--jwt-secret", testSecret)(tok); err == nil {
		t.Fatal("a token for another audience was accepted")
	}
}

// testSecret is long enough for HS256 (auth.MinSecretLen).
const testSecret = "feedd-test-secret-0123456789abcdef"

// A secret under 32 bytes is refused by `feedd token` and, at startup, by
// `feedd serve`, naming the flag and the minimum.
func TestShortSecretRefused(t *testing.T) {
	t.Setenv("FEED_JWT_SECRET", "")
	var out bytes.Buffer
	err := runToken(context.Background(), []string{"--user", "1", "--jwt-secret", "s3cret"}, cmdOptions{stdout: &out})
	if err == nil || !strings.Contains(err.Error(), "--jwt-secret") || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("token with a 6-byte secret: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("printed %q", out.String())
	}
	err = run(t.Context(), []string{"serve", "--jwt-secret", "s3cret", "--demo=false", "--addr", "127.0.0.1:0"}, cmdOptions{stdout: &out})
	if err == nil || !strings.Contains(err.Error(), "--jwt-secret") || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("serve with a 6-byte secret: %v", err)
	}
}

// TestTokenWithKid: a token minted with --jwt-kid is verified by the
// "oct" key of that id in a JWKS file.
func TestTokenWithKid(t *testing.T) {
	t.Setenv("FEED_JWT_SECRET", "")
	var out bytes.Buffer
	if err := runToken(context.Background(), []string{"--user", "5", "--jwt-secret", testSecret, "--jwt-kid", "2026-11"}, cmdOptions{stdout: &out}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	jwks := `{"keys":[{"kty":"oct","kid":"2026-11","k":"` + base64.RawURLEncoding.EncodeToString([]byte(testSecret)) + `"}]}`
	if err := os.WriteFile(path, []byte(jwks), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	j := addJWTFlags(fs)
	if _, err := parse(fs, []string{"--jwt-jwks-file", path}); err != nil {
		t.Fatal(err)
	}
	v, err := j.verifier()
	if err != nil {
		t.Fatal(err)
	}
	if id, err := v.Verify(strings.TrimSpace(out.String())); err != nil || id != 5 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
}
