package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

func TestAuthHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"errors":[{"message":"no","extensions":{"code":"UNAUTHENTICATED"}}]}`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		auth          Auth
		bearer, devID string
	}{
		{Auth{}, "", ""},
		{Auth{ViewerID: "7"}, "", "7"},
		{Auth{Token: "tok"}, "Bearer tok", ""},
		{Auth{Token: "tok", ViewerID: "7"}, "Bearer tok", "7"},
	} {
		_, err := Viewer(context.Background(), New(srv.URL, c.auth, srv.Client()))
		if ErrorCode(err) != "UNAUTHENTICATED" {
			t.Errorf("%+v: err %v, want UNAUTHENTICATED", c.auth, err)
		}
		if got.Get("Authorization") != c.bearer || got.Get(DevHeader) != c.devID {
			t.Errorf("%+v: sent Authorization %q, %s %q", c.auth, got.Get("Authorization"), DevHeader, got.Get(DevHeader))
		}
	}
}

func TestErrorCode(t *testing.T) {
	list := gqlerror.List{{Message: "m", Extensions: map[string]any{"code": "NOT_FOUND"}}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("dial tcp: refused"), ""},
		{list, "NOT_FOUND"},
		{fmt.Errorf("wrapped: %w", list), "NOT_FOUND"},
		{&graphql.HTTPError{StatusCode: 422, Response: graphql.Response{Errors: list}}, "NOT_FOUND"},
		{gqlerror.List{{Message: "no code"}}, ""},
	} {
		if got := ErrorCode(c.err); got != c.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestDateTime(t *testing.T) {
	in := time.Date(2026, 12, 1, 19, 0, 0, 123456789, time.FixedZone("CET", 3600))
	b, err := MarshalDateTime(&in)
	if err != nil || string(b) != `"2026-12-01T18:00:00.123Z"` {
		t.Fatalf("MarshalDateTime = %s, %v", b, err)
	}
	var out time.Time
	if err := UnmarshalDateTime(b, &out); err != nil || !out.Equal(in.Truncate(time.Millisecond)) || out.Location() != time.UTC {
		t.Fatalf("UnmarshalDateTime(%s) = %v, %v", b, out, err)
	}
	if err := UnmarshalDateTime([]byte(`"yesterday"`), &out); err == nil {
		t.Fatal("UnmarshalDateTime accepted garbage")
	}
}
