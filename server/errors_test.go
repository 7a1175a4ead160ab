package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/reqinfo"
)

func TestPresentError(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	present := presentError(log)
	ctx := reqinfo.With(context.Background(), reqinfo.Facts{RequestID: "req42"})

	validation := gqlerror.Errorf("Cannot query field \"x\"")
	errcode.Set(validation, errcode.ValidationFailed)
	fieldLevel := gqlerror.Errorf("must not be null")
	fieldLevel.Path = ast.Path{ast.PathName("viewer")}

	for _, c := range []struct {
		name      string
		err       error
		code, msg string
	}{
		{"domain error", fmt.Errorf("wrapped: %w", &apierr.Error{Code: apierr.Forbidden, Message: "not yours"}), "FORBIDDEN", "not yours"},
		{"unexpected error", errors.New("redis: WRONGTYPE secret key name"), "INTERNAL", "internal error (request req42)"},
		{"panic", recoverPanic(log)(ctx, "boom"), "INTERNAL", "internal error (request req42)"},
		{"validation", validation, "BAD_USER_INPUT", `Cannot query field "x"`},
		{"request-level without code", gqlerror.Errorf("json request body could not be decoded"), "BAD_USER_INPUT", "json request body could not be decoded"},
		{"field-level without code", fieldLevel, "INTERNAL", "internal error (request req42)"},
		{"scalar with code", &gqlerror.Error{Message: "bad date", Extensions: map[string]any{"code": "BAD_USER_INPUT"}}, "BAD_USER_INPUT", "bad date"},
	} {
		got := present(ctx, c.err)
		if got.Extensions["code"] != c.code || got.Message != c.msg {
			t.Errorf("%s: got %q %q, want %q %q", c.name, got.Extensions["code"], got.Message, c.code, c.msg)
		}
	}
	if !strings.Contains(logs.String(), "WRONGTYPE secret key name") || !strings.Contains(logs.String(), "req42") {
		t.Errorf("internal error not logged with its request id:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "stack=") {
		t.Errorf("panic logged without a stack:\n%s", logs.String())
	}
	if validation.Extensions["code"] != errcode.ValidationFailed {
		t.Error("presenter edited a shared gqlgen error")
	}
}

func TestAddCodes(t *testing.T) {
	body, added := addCodes([]byte(`{"errors":[{"message":"a"},{"message":"b","extensions":{"code":"NOT_FOUND"}}],"data":null}`), 400)
	if got := string(body); !strings.Contains(got, `"code":"BAD_USER_INPUT"`) || !strings.Contains(got, `"code":"NOT_FOUND"`) {
		t.Fatalf("addCodes = %s", got)
	}
	if len(added) != 1 || added[0] != "BAD_USER_INPUT" {
		t.Errorf("addCodes reported setting %q, want the one BAD_USER_INPUT", added)
	}
	if got, _ := addCodes([]byte(`{"errors":[null]}`), 500); !strings.Contains(string(got), `"code":"INTERNAL"`) {
		t.Fatalf("addCodes 500 = %s", got)
	}
	if got, added := addCodes([]byte("not json"), 400); string(got) != "not json" || added != nil {
		t.Fatalf("addCodes changed a non-JSON body: %s, %q", got, added)
	}
}
