package importer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestExportDeletedAccount: a deleted account is exported as a deleted
// line, not as a user; an import records it, holding its handle, and its
// records are not brought back.
func TestExportDeletedAccount(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	src, _ := rtService(t, st, st.Prefix+"src:")
	if _, err := Load(ctx, src, strings.NewReader(`{"type":"user","id":"1","handle":"ann"}
{"type":"user","id":"2","handle":"bob"}
{"type":"follow","follower":"2","followee":"1"}
{"type":"post","id":"10","author":"1","text":"ann's","createdAt":"2024-01-01T00:00:00Z"}
`)); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteAccount(ctx, 1, "ann"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	est, err := Export(ctx, src, &out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := out.String()
	if est.Deleted != 1 || !strings.Contains(file, `{"type":"deleted","id":"1","handle":"ann","deletedAt":"`) {
		t.Fatalf("export (%d deleted lines):\n%s", est.Deleted, file)
	}
	if strings.Contains(file, `"handle":"ann","displayName"`) || strings.Contains(file, `"author":"1"`) || strings.Contains(file, `"followee":"1"`) {
		t.Fatalf("export carries the deleted account's records:\n%s", file)
	}

	dst, _ := rtService(t, st, st.Prefix+"dst:")
	ist, err := Load(ctx, dst, strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if ist.Deleted != 1 {
		t.Errorf("import applied %d deleted lines, want 1", ist.Deleted)
	}
	if err := dst.PutUser(ctx, feedcore.User{ID: 7, Handle: "ann"}); feedcore.CodeOf(err) != apierr.BadInput {
		t.Errorf("taking the imported held handle: %v, want BAD_USER_INPUT", err)
	}
	// Applying the file again changes nothing and succeeds.
	if _, err := Load(ctx, dst, strings.NewReader(file)); err != nil {
		t.Fatalf("second import: %v", err)
	}
	var again bytes.Buffer
	if _, err := Export(ctx, dst, &again, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if again.String() != file {
		t.Errorf("re-export differs:\n%s\nwant:\n%s", again.String(), file)
	}
}
