package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/feedd/feedd/auth"
)

// jwtFlags configure bearer token verification.
type jwtFlags struct {
	secret    string
	publicKey string
	jwksFile  string
	issuer    string
	audience  string
}

func addJWTFlags(fs *flag.FlagSet) *jwtFlags {
	j := &jwtFlags{}
	fs.StringVar(&j.secret, "jwt-secret", "", fmt.Sprintf("HS256 secret that verifies bearer tokens without a \"kid\"; at least %d bytes", auth.MinSecretLen))
	fs.StringVar(&j.publicKey, "jwt-public-key", "", "RS256 public key that verifies bearer tokens without a \"kid\": a PEM file, or the PEM text itself")
	fs.StringVar(&j.jwksFile, "jwt-jwks-file", "", "JWKS file of keys (RS256 \"RSA\", HS256 \"oct\") that verify bearer tokens by their \"kid\"; re-read when its modification time changes, so keys rotate without a restart")
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
	if j.jwksFile != "" {
		ks, err := auth.LoadKeySet(j.jwksFile)
		if err != nil {
			return nil, fmt.Errorf("--jwt-jwks-file: %w", err)
		}
		ks.Log = func(err error) { slog.Error("--jwt-jwks-file", "err", err) }
		v.JWKS = ks
	}
	if err := v.Check(); err != nil {
		flag := "--jwt-secret"
		if v.RS256Key != nil && len(v.HS256Secret) == 0 {
			flag = "--jwt-public-key"
		}
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return v, nil
}
