package auth

import (
	"crypto"
	"crypto/hmac"
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

var secret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes: the minimum

func hs256(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// sign builds a token by hand, so tests can send what no library would mint.
func sign(header, claims string, signer func(string) []byte) string {
	enc := base64.RawURLEncoding.EncodeToString
	signed := enc([]byte(header)) + "." + enc([]byte(claims))
	return signed + "." + enc(signer(signed))
}

func hsTok(claims string) string {
	return sign(`{"alg":"HS256","typ":"JWT"}`, claims, func(s string) []byte { return hs256(secret, s) })
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestMintVerify(t *testing.T) {
	tok, err := Mint(secret, 42, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{HS256Secret: secret}
	if id, err := v.Verify(tok); err != nil || id != 42 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
	if _, err := (&Verifier{HS256Secret: []byte("another-secret-another-secret-xx")}).Verify(tok); err == nil {
		t.Fatal("wrong secret accepted")
	}
	// Leeway: 29 s after exp is accepted, 31 s after is not.
	exp := time.Now().Add(time.Hour)
	at := func(d time.Duration) *Verifier {
		return &Verifier{HS256Secret: secret, Now: func() time.Time { return exp.Add(d) }}
	}
	if _, err := at(Leeway - time.Second).Verify(tok); err != nil {
		t.Errorf("within the leeway: %v", err)
	}
	if _, err := at(Leeway + 2*time.Second).Verify(tok); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("past the leeway: err = %v", err)
	}
	for name, s := range map[string][]byte{"none": nil, "short": []byte("s3cret"), "31 bytes": secret[:31]} {
		if _, err := Mint(s, 1, time.Hour); err == nil {
			t.Errorf("Mint with a %s secret succeeded", name)
		}
	}
	if _, err := Mint(secret, 0, time.Hour); err == nil {
		t.Error("Mint for user 0 succeeded")
	}
}

func TestCheck(t *testing.T) {
	if err := (&Verifier{HS256Secret: secret[:31]}).Check(); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("31-byte secret: %v", err)
	}
	if err := (&Verifier{HS256Secret: secret}).Check(); err != nil {
		t.Errorf("32-byte secret: %v", err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Verifier{RS256Key: &small.PublicKey}).Check(); err == nil {
		t.Error("1024-bit RSA key accepted")
	}
}

// TestVerifyRefuses is every way a token is refused, with what the client
// is told. No message may name a Go type, the expected issuer or audience.
func TestVerifyRefuses(t *testing.T) {
	now := time.Now()
	exp := itoa(now.Add(time.Hour).Unix())
	past := itoa(now.Add(-time.Hour).Unix())
	future := itoa(now.Add(time.Hour).Unix())
	v := &Verifier{HS256Secret: secret, Issuer: "https://id.example", Audience: "feedd"}
	good := `"iss":"https://id.example","aud":"feedd"`
	for _, tc := range []struct{ name, tok, want string }{
		{"none alg", sign(`{"alg":"none"}`, `{"sub":"1","exp":`+exp+`,`+good+`}`, func(string) []byte { return nil }), "algorithm"},
		{"unknown alg", sign(`{"alg":"XX99"}`, `{"sub":"1","exp":`+exp+`,`+good+`}`, func(string) []byte { return []byte("x") }), "algorithm"},
		{"RS256 without an RSA key", sign(`{"alg":"RS256"}`, `{"sub":"1","exp":`+exp+`,`+good+`}`, func(s string) []byte { return hs256(secret, s) }), "algorithm"},
		{"no exp", hsTok(`{"sub":"1",` + good + `}`), `"exp"`},
		{"expired", hsTok(`{"sub":"1","exp":` + past + `,` + good + `}`), "expired"},
		{"not before", hsTok(`{"sub":"1","exp":` + exp + `,"nbf":` + future + `,` + good + `}`), "not valid yet"},
		{"wrong issuer", hsTok(`{"sub":"1","exp":` + exp + `,"iss":"evil","aud":"feedd"}`), "issuer"},
		{"no issuer", hsTok(`{"sub":"1","exp":` + exp + `,"aud":"feedd"}`), "issuer"},
		{"wrong audience", hsTok(`{"sub":"1","exp":` + exp + `,"iss":"https://id.example","aud":"other"}`), "audience"},
		{"no audience", hsTok(`{"sub":"1","exp":` + exp + `,"iss":"https://id.example"}`), "audience"},
		{"aud a number", hsTok(`{"sub":"1","exp":` + exp + `,"iss":"https://id.example","aud":7}`), "claims are malformed"},
		{"exp a quoted number", hsTok(`{"sub":"1","exp":"` + exp + `",` + good + `}`), "claims are malformed"},
		{"exp a string", hsTok(`{"sub":"1","exp":"tomorrow",` + good + `}`), "claims are malformed"},
		{"sub a number", hsTok(`{"sub":1,"exp":` + exp + `,` + good + `}`), "claims are malformed"},
		{"sub a name", hsTok(`{"sub":"ann","exp":` + exp + `,` + good + `}`), `"sub"`},
		{"sub zero", hsTok(`{"sub":"0","exp":` + exp + `,` + good + `}`), `"sub"`},
		{"sub padded", hsTok(`{"sub":"007","exp":` + exp + `,` + good + `}`), `"sub"`},
		{"no sub", hsTok(`{"exp":` + exp + `,` + good + `}`), `"sub"`},
		{"duplicate sub", hsTok(`{"sub":"1","sub":"2","exp":` + exp + `,` + good + `}`), "twice"},
		{"sub in another case", hsTok(`{"sub":"1","SUB":"2","exp":` + exp + `,` + good + `}`), "twice"},
		{"Sub only", hsTok(`{"Sub":"2","exp":` + exp + `,` + good + `}`), ""},
		{"duplicate exp", hsTok(`{"sub":"1","exp":` + exp + `,"exp":` + past + `,` + good + `}`), "twice"},
		{"claims an array", hsTok(`[1]`), "malformed"},
		{"trailing claims", hsTok(`{"sub":"1","exp":` + exp + `,` + good + `} {}`), "malformed"},
		{"wrong signature", sign(`{"alg":"HS256"}`, `{"sub":"1","exp":`+exp+`,`+good+`}`, func(s string) []byte { return hs256([]byte("x"), s) }), "signature"},
		{"garbage", "a.b", "malformed"},
		{"four parts", hsTok(`{"sub":"1","exp":`+exp+`,`+good+`}`) + ".x", "malformed"},
		{"padded signature", hsTok(`{"sub":"1","exp":`+exp+`,`+good+`}`) + "=", "malformed"},
		{"empty", "", "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := v.Verify(tc.tok)
			if err == nil {
				// "Sub" is not "sub": the decoder must not take it for one.
				t.Fatalf("accepted as user %d", id)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("err = %q, want it to mention %q", msg, tc.want)
			}
			for _, leak := range []string{"https://id.example", "json:", "Go value", "int64", "string into", "NumericDate", "ClaimStrings", "jwt."} {
				if strings.Contains(msg, leak) {
					t.Errorf("err = %q leaks %q", msg, leak)
				}
			}
		})
	}
	if _, err := (&Verifier{}).Verify(hsTok(`{"sub":"1","exp":` + exp + `}`)); err == nil {
		t.Error("verifier without keys accepted a token")
	}
}

// TestDuplicateSubCannotSmuggle: whichever of two "sub" members another
// parser would read, this one reads neither.
func TestDuplicateSubCannotSmuggle(t *testing.T) {
	exp := itoa(time.Now().Add(time.Hour).Unix())
	v := &Verifier{HS256Secret: secret}
	for _, claims := range []string{
		`{"sub":"1","sub":"2","exp":` + exp + `}`,
		`{"sub":"1","Sub":"2","exp":` + exp + `}`,
		`{"SUB":"2","sub":"1","exp":` + exp + `}`,
		`{"sub":"1","exp":` + exp + `,"su\u0062":"2"}`,
	} {
		if id, err := v.Verify(hsTok(claims)); err == nil {
			t.Errorf("%s: signed in as %d", claims, id)
		}
	}
}

func rsaPair(t testing.TB) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func rsSigner(key *rsa.PrivateKey) func(string) []byte {
	return func(s string) []byte {
		sum := sha256.Sum256([]byte(s))
		sig, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		return sig
	}
}

func TestRS256(t *testing.T) {
	key, der := rsaPair(t)
	pub, err := ParseRSAPublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	exp := itoa(time.Now().Add(time.Hour).Unix())
	tok := sign(`{"alg":"RS256","typ":"JWT"}`, `{"sub":"7","exp":`+exp+`}`, rsSigner(key))
	if id, err := (&Verifier{RS256Key: pub}).Verify(tok); err != nil || id != 7 {
		t.Fatalf("Verify RS256 = %d, %v", id, err)
	}
	// The HMAC-with-public-key confusion attack must fail, whether or not
	// the server also has an HS256 secret.
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for _, k := range [][]byte{der, pemKey} {
		forged := sign(`{"alg":"HS256"}`, `{"sub":"7","exp":`+exp+`}`, func(s string) []byte { return hs256(k, s) })
		if _, err := (&Verifier{RS256Key: pub}).Verify(forged); err == nil {
			t.Fatal("HS256 token signed with the public key accepted by an RS256 verifier")
		}
		if _, err := (&Verifier{RS256Key: pub, HS256Secret: secret}).Verify(forged); err == nil {
			t.Fatal("HS256 token signed with the public key accepted")
		}
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
