// Package auth turns request credentials into a viewer id: bearer JWTs
// (HS256 with a shared secret, or RS256 with a public key) and, in
// development, the X-Viewer-Id header. It uses only the standard library:
// the subset of JWT feedd needs is small and fully specified here.
package auth

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Leeway absorbs clock skew between the token's issuer and this server.
const Leeway = 30 * time.Second

// Verifier checks bearer tokens. Set HS256Secret, RS256Key or both; a token
// is accepted only with the algorithm of a configured key, so an attacker
// cannot pick "none" or sign with the public key as an HMAC secret.
type Verifier struct {
	HS256Secret []byte
	RS256Key    *rsa.PublicKey
	// Issuer, when set, must equal the token's "iss" claim.
	Issuer string
	// Audience, when set, must be the token's "aud" claim or one of its
	// elements.
	Audience string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Enabled reports whether any key is configured.
func (v *Verifier) Enabled() bool {
	return v != nil && (len(v.HS256Secret) > 0 || v.RS256Key != nil)
}

type header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ,omitempty"`
}

type claims struct {
	Sub string `json:"sub"`
	Iat int64  `json:"iat,omitempty"`
	Exp *int64 `json:"exp,omitempty"`
	Nbf *int64 `json:"nbf,omitempty"`
	Iss string `json:"iss,omitempty"`
	Aud aud    `json:"aud,omitempty"`
}

// Verify checks token's signature and times and returns its subject, the
// viewer's database id. Errors are safe to show the client.
func (v *Verifier) Verify(token string) (uint64, error) {
	if !v.Enabled() {
		return 0, errors.New("bearer tokens are not accepted: the server has no --jwt-secret or --jwt-public-key")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0, errors.New("malformed token: want header.payload.signature")
	}
	var h header
	if err := decodePart(parts[0], &h); err != nil {
		return 0, fmt.Errorf("malformed token header: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return 0, errors.New("malformed token signature")
	}
	signed := parts[0] + "." + parts[1]
	switch {
	case h.Alg == "HS256" && len(v.HS256Secret) > 0:
		if !hmac.Equal(sig, hs256(v.HS256Secret, signed)) {
			return 0, errors.New("token signature does not verify")
		}
	case h.Alg == "RS256" && v.RS256Key != nil:
		sum := sha256.Sum256([]byte(signed))
		if rsa.VerifyPKCS1v15(v.RS256Key, crypto.SHA256, sum[:], sig) != nil {
			return 0, errors.New("token signature does not verify")
		}
	default:
		return 0, fmt.Errorf("token algorithm %q is not accepted by this server", h.Alg)
	}
	var c claims
	if err := decodePart(parts[1], &c); err != nil {
		return 0, fmt.Errorf("malformed token claims: %w", err)
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now()
	if c.Exp != nil && t.After(time.Unix(*c.Exp, 0).Add(Leeway)) {
		return 0, errors.New("token has expired")
	}
	if c.Nbf != nil && t.Add(Leeway).Before(time.Unix(*c.Nbf, 0)) {
		return 0, errors.New("token is not valid yet")
	}
	if v.Issuer != "" && c.Iss != v.Issuer {
		return 0, fmt.Errorf("token issuer %q is not accepted: want %q", c.Iss, v.Issuer)
	}
	if v.Audience != "" && !slices.Contains(c.Aud, v.Audience) {
		return 0, fmt.Errorf("token is not meant for this server: audience must include %q", v.Audience)
	}
	id, err := strconv.ParseUint(c.Sub, 10, 64)
	if err != nil || id == 0 {
		return 0, errors.New(`token "sub" must be a user's decimal database id`)
	}
	return id, nil
}

// aud is the "aud" claim: one string or an array of strings.
type aud []string

func (a *aud) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = aud{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New(`"aud" must be a string or an array of strings`)
	}
	*a = many
	return nil
}

func (a aud) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// Mint returns an HS256 token for userID valid for ttl, for `feedd token`
// and tests.
func Mint(secret []byte, userID uint64, ttl time.Duration) (string, error) {
	return MintWith(secret, userID, ttl, MintOptions{})
}

// MintOptions are the optional claims of a minted token.
type MintOptions struct {
	// Issuer and Audience, when set, become the "iss" and "aud" claims.
	Issuer, Audience string
}

// MintWith is Mint with optional claims.
func MintWith(secret []byte, userID uint64, ttl time.Duration, o MintOptions) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("no secret: set --jwt-secret (or FEED_JWT_SECRET)")
	}
	if userID == 0 {
		return "", errors.New("user id must be a positive number")
	}
	if ttl <= 0 {
		return "", errors.New("ttl must be positive")
	}
	now := time.Now()
	exp := now.Add(ttl).Unix()
	h, _ := json.Marshal(header{Alg: "HS256", Typ: "JWT"})
	cl := claims{Sub: strconv.FormatUint(userID, 10), Iat: now.Unix(), Exp: &exp, Iss: o.Issuer}
	if o.Audience != "" {
		cl.Aud = aud{o.Audience}
	}
	c, _ := json.Marshal(cl)
	signed := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return signed + "." + base64.RawURLEncoding.EncodeToString(hs256(secret, signed)), nil
}

// ParseRSAPublicKey reads a PEM "PUBLIC KEY" (PKIX) or "RSA PUBLIC KEY"
// (PKCS #1) block.
func ParseRSAPublicKey(pemBytes []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block found in the public key")
	}
	switch block.Type {
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("public key is %T; only RSA (RS256) is supported", k)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a public key", block.Type)
}

func hs256(secret []byte, signed string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

func decodePart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return errors.New("not base64url")
	}
	return json.Unmarshal(b, v)
}
