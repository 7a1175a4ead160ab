// Package auth turns request credentials into a viewer id: bearer JWTs
// (HS256 with a shared secret, RS256 with a public key, or either from a
// JWKS file with several keys chosen by "kid") and, in development, the
// X-Viewer-Id header. Token parsing, signatures and the registered claims
// are github.com/golang-jwt/jwt/v5's; this package pins what it accepts.
package auth

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/feedd/feedd/internal/jsontext"
)

// Leeway absorbs clock skew between the token's issuer and this server: a
// token is accepted up to Leeway after its "exp" and from Leeway before its
// "nbf".
const Leeway = 30 * time.Second

// MinSecretLen is the shortest HS256 secret accepted, in bytes: RFC 7518
// (3.2) requires a key at least as long as the hash output, 256 bits.
const MinSecretLen = 32

// MinRSABits is the smallest RSA modulus accepted for RS256.
const MinRSABits = 2048

// Verifier checks bearer tokens. Set HS256Secret, RS256Key, JWKS or any of
// them; a token is accepted only with the algorithm of the key that checks
// it, so an attacker cannot pick "none" or sign with the public key as an
// HMAC secret.
type Verifier struct {
	// HS256Secret verifies HS256 tokens without a "kid" (at least
	// MinSecretLen bytes; see Check).
	HS256Secret []byte
	// RS256Key verifies RS256 tokens without a "kid".
	RS256Key *rsa.PublicKey
	// JWKS, when set, verifies tokens that carry a "kid" header with the key
	// of that id (RS256 "RSA" keys and HS256 "oct" keys).
	JWKS *KeySet
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
	return v != nil && (len(v.HS256Secret) > 0 || v.RS256Key != nil || v.JWKS != nil)
}

// Check reports a configuration that must not serve: an HS256 secret
// shorter than MinSecretLen bytes or an RSA key under MinRSABits.
func (v *Verifier) Check() error {
	if v == nil {
		return nil
	}
	if n := len(v.HS256Secret); n > 0 && n < MinSecretLen {
		return fmt.Errorf("HS256 secret is %d bytes; it must be at least %d (e.g. `openssl rand -base64 32`)", n, MinSecretLen)
	}
	if v.RS256Key != nil && v.RS256Key.N.BitLen() < MinRSABits {
		return fmt.Errorf("RSA public key is %d bits; it must be at least %d", v.RS256Key.N.BitLen(), MinRSABits)
	}
	return nil
}

// claims are the claims feedd reads. Decoding refuses a claim name given
// twice, in any spelling of its case: encoding/json would take the last
// one and match names case-insensitively, so {"sub":"1","SUB":"2"} would
// sign in as 2 while another parser reads 1.
type claims struct {
	jwt.RegisteredClaims
}

// Claims decoding refusals; clientError words them for the client.
var (
	errDuplicateClaim = errors.New("duplicate claim")
	errClaimCase      = errors.New("registered claim name in another case")
	errClaimType      = errors.New("claim of the wrong type")
)

// registered are the claim names of RFC 7519 (4.1). Claim names are
// case-sensitive, but encoding/json matches them without case, so "Sub"
// would be read as "sub": a registered name in another case is refused.
var registered = map[string]bool{"iss": true, "sub": true, "aud": true, "exp": true, "nbf": true, "iat": true, "jti": true}

func (c *claims) UnmarshalJSON(b []byte) error {
	if err := uniqueKeys(b); err != nil {
		return err
	}
	type plain claims // no UnmarshalJSON: no recursion
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return fmt.Errorf("%w: %w", errClaimType, err)
	}
	return nil
}

// uniqueKeys checks that the JSON object b names no member twice, comparing
// names without regard to case, that registered names are in lower case and
// that the time claims are JSON numbers.
func uniqueKeys(b []byte) error {
	seen := map[string]bool{}
	return claimsRefusals.Members(b, func(k string, dec *json.Decoder) error {
		lower := strings.ToLower(k)
		if seen[lower] {
			return errDuplicateClaim
		}
		if registered[lower] && k != lower {
			return errClaimCase
		}
		seen[lower] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		// NumericDate would also take "123" (a string) as a number.
		if (k == "exp" || k == "nbf" || k == "iat") && (len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return errClaimType
		}
		return nil
	})
}

// claimsRefusals word jsontext's refusals of claims that are not one
// object.
var claimsRefusals = jsontext.Refusals{
	NotObject: errors.New("claims are not a JSON object"),
	Malformed: errors.New("claims are not well-formed JSON"),
	Trailing:  errors.New("trailing data after the claims"),
}

// Verify checks token's signature, algorithm and claims and returns its
// subject, the viewer's database id. Errors are written for the client:
// they say what to fix without naming keys, expected values or Go types.
func (v *Verifier) Verify(token string) (uint64, error) {
	id, _, err := v.VerifyExpiry(token)
	return id, err
}

// VerifyExpiry is Verify also returning the token's "exp": a connection
// that outlives a request (a WebSocket, an event stream) is closed then.
func (v *Verifier) VerifyExpiry(token string) (uint64, time.Time, error) {
	if !v.Enabled() {
		return 0, time.Time{}, errors.New("bearer tokens are not accepted: the server has no key to verify them")
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(v.methods()),
		jwt.WithLeeway(Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(now),
		jwt.WithStrictDecoding(), // base64url without padding, as RFC 7515 says
	}
	if v.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.Issuer))
	}
	if v.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.Audience))
	}
	var c claims
	if _, err := jwt.NewParser(opts...).ParseWithClaims(token, &c, v.key); err != nil {
		return 0, time.Time{}, clientError(err)
	}
	id, err := strconv.ParseUint(c.Subject, 10, 64)
	if err != nil || id == 0 || strconv.FormatUint(id, 10) != c.Subject {
		return 0, time.Time{}, errors.New(`token "sub" must be a user's decimal database id`)
	}
	// WithExpirationRequired: a parsed token has an "exp".
	return id, c.ExpiresAt.Time, nil
}

// methods are the algorithms some configured key verifies.
func (v *Verifier) methods() []string {
	var hs, rs bool
	hs = len(v.HS256Secret) > 0
	rs = v.RS256Key != nil
	if v.JWKS != nil {
		h, r := v.JWKS.algorithms()
		hs, rs = hs || h, rs || r
	}
	var m []string
	if hs {
		m = append(m, jwt.SigningMethodHS256.Alg())
	}
	if rs {
		m = append(m, jwt.SigningMethodRS256.Alg())
	}
	return m
}

// Reasons a key lookup fails; clientError words them for the client.
var (
	errUnknownKey = errors.New("unknown key id")
	errNoKey      = errors.New("no key for algorithm")
)

// key is the jwt.Keyfunc: a token with a "kid" is checked with that JWKS
// key, whose algorithm must be the token's; one without, with the static
// key of its algorithm.
func (v *Verifier) key(t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	if kid, ok := t.Header["kid"]; ok && v.JWKS != nil {
		s, _ := kid.(string)
		k, ok := v.JWKS.lookup(s)
		if !ok || k.alg != alg {
			return nil, errUnknownKey
		}
		return k.key, nil
	}
	switch {
	case alg == jwt.SigningMethodHS256.Alg() && len(v.HS256Secret) > 0:
		return v.HS256Secret, nil
	case alg == jwt.SigningMethodRS256.Alg() && v.RS256Key != nil:
		return v.RS256Key, nil
	}
	if v.JWKS != nil {
		return nil, errUnknownKey
	}
	return nil, errNoKey
}

// clientError turns a jwt/v5 error into a message that tells the client
// what to fix. The library's own texts are not shown: they can quote Go
// types and the server's expectations.
func clientError(err error) error {
	switch {
	case errors.Is(err, errDuplicateClaim):
		return errors.New("token claims must not name a claim twice (names are compared without case)")
	case errors.Is(err, errUnknownKey):
		return errors.New(`token is signed with a key this server does not know (check its "kid"); get a new token`)
	case errors.Is(err, errNoKey), errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return errors.New("token algorithm is not accepted by this server")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return errors.New("token signature does not verify")
	case errors.Is(err, errClaimCase):
		return errors.New(`token claim names are case-sensitive: "iss", "sub", "aud", "exp", "nbf", "iat" and "jti" must be written in lower case`)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "exp claim"):
		return errors.New(`token has no expiry: it must carry an "exp" claim`)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "iss claim"):
		return errors.New(`token comes from an issuer this server does not accept ("iss")`)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "aud claim"):
		return errors.New(`token is not meant for this server: its "aud" claim is missing or names another audience`)
	case errors.Is(err, jwt.ErrTokenExpired):
		return errors.New("token has expired: get a new one")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return errors.New(`token is not valid yet ("nbf" is in the future): check the issuer's clock`)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return errors.New(`token is not meant for this server: its "aud" claim is missing or names another audience`)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return errors.New(`token comes from an issuer this server does not accept ("iss")`)
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return errors.New("token algorithm is not accepted by this server")
	case errors.Is(err, jwt.ErrTokenInvalidClaims) || errors.Is(err, jwt.ErrInvalidType) || errors.Is(err, errClaimType):
		return errors.New(`token claims are malformed: "exp", "nbf" and "iat" must be numbers, "iss" and "sub" strings, "aud" a string or an array of strings`)
	}
	return errors.New("malformed token: want a JWT, header.payload.signature in base64url")
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
	// KeyID, when set, becomes the "kid" header (a JWKS "oct" key's id).
	KeyID string
}

// MintWith is Mint with optional claims.
func MintWith(secret []byte, userID uint64, ttl time.Duration, o MintOptions) (string, error) {
	switch {
	case len(secret) == 0:
		return "", errors.New("mint token: no secret: set --jwt-secret (or FEED_JWT_SECRET)")
	case len(secret) < MinSecretLen:
		return "", fmt.Errorf("mint token: the secret is %d bytes; it must be at least %d", len(secret), MinSecretLen)
	case userID == 0:
		return "", errors.New("mint token: user id must be a positive number")
	case ttl <= 0:
		return "", errors.New("mint token: ttl must be positive")
	}
	now := time.Now()
	rc := jwt.RegisteredClaims{
		Subject:   strconv.FormatUint(userID, 10),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		Issuer:    o.Issuer,
	}
	if o.Audience != "" {
		rc.Audience = jwt.ClaimStrings{o.Audience}
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, rc)
	if o.KeyID != "" {
		t.Header["kid"] = o.KeyID
	}
	s, err := t.SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	return s, nil
}

// ParseRSAPublicKey reads a PEM "PUBLIC KEY" (PKIX) or "RSA PUBLIC KEY"
// (PKCS #1) block.
func ParseRSAPublicKey(pemBytes []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("parse RSA public key: no PEM block found")
	}
	switch block.Type {
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse RSA public key: %w", err)
		}
		return k, nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse RSA public key: %w", err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("parse RSA public key: the key is not RSA; only RS256 is supported")
		}
		return rk, nil
	}
	return nil, fmt.Errorf("parse RSA public key: PEM block %q is not a public key", block.Type)
}
