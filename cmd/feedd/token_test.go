package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

// A token minted by `feedd token` with --jwt-issuer and --jwt-audience is
// accepted by a server configured with the same, and refused by one
// expecting another audience.
func TestTokenIssuerAudience(t *testing.T) {
	var out bytes.Buffer
	if err := runToken(context.Background(), []string{"--user", "42", "--jwt-secret", "s",
		"--jwt-issuer", "https://id.example", "--jwt-audience", "feedd"}, &out); err != nil {
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
	if id, err := verifier("--jwt-secret", "s", "--jwt-issuer", "https://id.example", "--jwt-audience", "feedd")(tok); err != nil || id != 42 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
	t.Setenv("FEED_JWT_AUDIENCE", "other")
	if _, err := verifier("--jwt-secret", "s")(tok); err == nil {
		t.Fatal("a token for another audience was accepted")
	}
}
