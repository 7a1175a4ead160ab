package auth

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestIssuerAudience(t *testing.T) {
	v := &Verifier{HS256Secret: secret, Issuer: "https://id.example", Audience: "feedd"}
	good, err := MintWith(secret, 3, time.Hour, MintOptions{Issuer: "https://id.example", Audience: "feedd"})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := v.Verify(good); err != nil || id != 3 {
		t.Fatalf("Verify = %d, %v", id, err)
	}
	exp := itoa(time.Now().Add(time.Hour).Unix())
	if id, err := v.Verify(hsTok(`{"sub":"4","exp":` + exp + `,"iss":"https://id.example","aud":["other","feedd"]}`)); err != nil || id != 4 {
		t.Fatalf("aud array: %d, %v", id, err)
	}
	// Unconfigured checks accept any iss and aud.
	if _, err := (&Verifier{HS256Secret: secret}).Verify(good); err != nil {
		t.Errorf("no iss/aud configured: %v", err)
	}
}

// TestResolveProduction is the middleware as a production server runs it:
// dev auth off, a secret, an issuer and an audience.
func TestResolveProduction(t *testing.T) {
	cfg := Config{Verifier: &Verifier{HS256Secret: secret, Issuer: "iss", Audience: "aud"}}
	resolve := func(h map[string]string) Identity {
		r := httptest.NewRequest("POST", "/query", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return Resolve(cfg, r)
	}
	good, _ := MintWith(secret, 8, time.Hour, MintOptions{Issuer: "iss", Audience: "aud"})
	noAud, _ := MintWith(secret, 8, time.Hour, MintOptions{Issuer: "iss"})
	forged, _ := MintWith([]byte("guess-guess-guess-guess-guess-gu"), 8, time.Hour, MintOptions{Issuer: "iss", Audience: "aud"})
	if id := resolve(map[string]string{"Authorization": "Bearer " + good}); id.ViewerID != 8 {
		t.Fatalf("good token: %+v", id)
	}
	for name, h := range map[string]map[string]string{
		"missing":         nil,
		"dev header":      {DevHeader: "8"},
		"wrong audience":  {"Authorization": "Bearer " + noAud},
		"wrong signature": {"Authorization": "Bearer " + forged},
		"empty bearer":    {"Authorization": "Bearer "},
	} {
		id := resolve(h)
		if id.ViewerID != 0 {
			t.Errorf("%s: signed in as %d", name, id.ViewerID)
		}
		if (h != nil) != (id.Problem != "") {
			t.Errorf("%s: problem %q", name, id.Problem)
		}
	}
}

// TestCredentialsExpiry: a bearer token's identity carries its "exp", for
// a connection that outlives a request to end then; dev auth has none, and
// credentials from a WebSocket's connection_init resolve as headers do.
func TestCredentialsExpiry(t *testing.T) {
	cfg := Config{DevAuth: true, Verifier: &Verifier{HS256Secret: secret}}
	tok, err := Mint(secret, 6, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id := Credentials{Authorization: "Bearer " + tok}.Resolve(cfg)
	if id.ViewerID != 6 || id.Problem != "" {
		t.Fatalf("bearer: %+v", id)
	}
	if d := time.Until(id.Expires); d < 59*time.Minute || d > time.Hour {
		t.Errorf("Expires in %v, want about an hour", d)
	}
	if id := (Credentials{DevViewer: "9"}).Resolve(cfg); id.ViewerID != 9 || !id.Expires.IsZero() {
		t.Errorf("dev header: %+v", id)
	}
	if id := (Credentials{Authorization: "Bearer nope", DevViewer: "9"}).Resolve(cfg); id.ViewerID != 0 || id.Problem == "" || !id.Expires.IsZero() {
		t.Errorf("bad bearer with a dev header: %+v", id)
	}
	r := httptest.NewRequest("POST", "/query", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	if got := Resolve(cfg, r); got != id {
		t.Errorf("headers resolve to %+v, credentials to %+v", got, id)
	}
	if !(Credentials{}).Empty() || (Credentials{DevViewer: "1"}).Empty() {
		t.Error("Empty")
	}
}
