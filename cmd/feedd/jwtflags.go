package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/feedd/feedd/auth"
)

// jwtFlags configure bearer token verification.
type jwtFlags struct {
	secret    string
	publicKey string
	issuer    string
	audience  string
}

func addJWTFlags(fs *flag.FlagSet) *jwtFlags {
	j := &jwtFlags{}
	fs.StringVar(&j.secret, "jwt-secret", "", "HS256 secret that verifies bearer tokens")
	fs.StringVar(&j.publicKey, "jwt-public-key", "", "RS256 public key that verifies bearer tokens: a PEM file, or the PEM text itself")
	fs.StringVar(&j.issuer, "jwt-issuer", "", "when set, bearer tokens must carry this \"iss\" claim")
	fs.StringVar(&j.audience, "jwt-audience", "", "when set, bearer tokens' \"aud\" claim must be or include this")
	return j
}

func (j *jwtFlags) verifier() (*auth.Verifier, error) {
	v := &auth.Verifier{HS256Secret: []byte(j.secret), Issuer: j.issuer, Audience: j.audience}
	if j.publicKey != "" {
		pemBytes := []byte(j.publicKey)
		if !strings.HasPrefix(strings.TrimSpace(j.publicKey), "-----BEGIN") {
			b, err := os.ReadFile(j.publicKey)
			if err != nil {
				return nil, fmt.Errorf("--jwt-public-key: %w", err)
			}
			pemBytes = b
		}
		k, err := auth.ParseRSAPublicKey(pemBytes)
		if err != nil {
			return nil, fmt.Errorf("--jwt-public-key: %w", err)
		}
		v.RS256Key = k
	}
	return v, nil
}
