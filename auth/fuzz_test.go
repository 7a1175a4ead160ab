package auth

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzNow is the clock of FuzzVerify, so that committed seeds stay valid:
// their "exp" is after it.
var fuzzNow = time.Unix(1_800_000_000, 0)

// FuzzVerify: no input panics, and a token is accepted only when its claims
// name "sub" once, exactly so, with the decimal id returned, and carry an
// "exp" that is not past. Seeds are in testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	exp := strconv.FormatInt(fuzzNow.Add(time.Hour).Unix(), 10)
	f.Add(hsTok(`{"sub":"1","exp":` + exp + `}`))
	f.Add(hsTok(`{"sub":"1","SUB":"2","exp":` + exp + `}`))
	v := &Verifier{HS256Secret: secret, Now: func() time.Time { return fuzzNow }}
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := v.Verify(tok)
		if err != nil {
			if id != 0 {
				t.Fatalf("error %v with id %d", err, id)
			}
			return
		}
		parts := strings.Split(tok, ".")
		raw, derr := base64.RawURLEncoding.DecodeString(parts[1])
		if derr != nil {
			t.Fatalf("accepted a token whose claims are not base64url: %q", tok)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("accepted claims that are not an object: %s", raw)
		}
		var sub string
		if json.Unmarshal(m["sub"], &sub) != nil || sub != strconv.FormatUint(id, 10) {
			t.Fatalf("accepted as %d with claims %s", id, raw)
		}
		n := 0
		for k := range m {
			if strings.EqualFold(k, "sub") {
				n++
			}
		}
		if n != 1 || strings.Count(strings.ToLower(string(raw)), `"sub"`) != 1 {
			t.Fatalf("accepted claims naming sub more than once: %s", raw)
		}
		var e float64
		if json.Unmarshal(m["exp"], &e) != nil || time.Unix(int64(e), 0).Add(Leeway+time.Second).Before(fuzzNow) {
			t.Fatalf("accepted claims without a live exp: %s", raw)
		}
	})
}
