package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedd/feedd/redisstore/storetest"
)

// TestImportDrainNothingToFanOut: `feedd import --drain` of users and
// follows only, with no fan-out to wait for, succeeds.
func TestImportDrainNothingToFanOut(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	file := filepath.Join(t.TempDir(), "graph.jsonl")
	lines := `{"type":"user","id":"1","handle":"ann"}
{"type":"user","id":"2","handle":"bob"}
{"type":"follow","follower":"1","followee":"2"}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"import", "--redis", os.Getenv(storetest.Env), "--key-prefix", st.Prefix, "--drain", file}, cmdOptions{stdout: &out})
	if err != nil {
		t.Fatalf("import --drain: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Fan-out done") {
		t.Errorf("import --drain printed:\n%s", out.String())
	}
}

// TestExportCommand: `feedd export` writes what `feedd import` loaded,
// likes before counts, and nothing of a deleted post.
func TestExportCommand(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	url := os.Getenv(storetest.Env)
	dir := t.TempDir()
	in := []string{
		`{"type":"user","id":"1","handle":"ann","displayName":"Ann <A&B>","avatarUrl":"https://a.example/1.png"}`,
		`{"type":"user","id":"2","handle":"bob","displayName":"bob"}`,
		`{"type":"follow","follower":"1","followee":"2","createdAt":"2023-07-10T08:00:00Z"}`,
		`{"type":"post","id":"10","author":"2","text":"hello","createdAt":"2023-07-11T15:32:02.5Z"}`,
		`{"type":"live","id":"20","anchor":"2","title":"soon","scheduledStartAt":"2030-01-01T00:00:00Z","endedAt":"2024-01-01T00:00:00Z"}`,
		`{"type":"like","user":"1","post":"10"}`,
		`{"type":"counts","post":"10","likes":7,"comments":1,"reposts":2,"favorites":3}`,
	}
	src := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(src, []byte(strings.Join(in, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := run(ctx, []string{"import", "--redis", url, "--key-prefix", st.Prefix, "--drain", src}, cmdOptions{stdout: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "out.jsonl")
	var out bytes.Buffer
	if err := run(ctx, []string{"export", "--redis", url, "--key-prefix", st.Prefix, dst}, cmdOptions{stdout: &out}); err != nil {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(out.String(), "Exported 2 users, 1 follows, 1 posts, 1 live sessions, 1 likes, 0 favorites, 1 counters: 7 lines") {
		t.Errorf("export printed %q", out.String())
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	// Kind after kind, in the order of in; within a kind, in SCAN's order.
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	kind := func(l string) int {
		return slices.IndexFunc(in, func(w string) bool { return strings.HasPrefix(l, w[:strings.Index(w, ",")]) })
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return kind(a) - kind(b) }) {
		t.Errorf("export wrote kinds out of order:\n%s", b)
	}
	sorted, want := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(in))
	if !slices.Equal(sorted, want) {
		t.Errorf("export wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(in, "\n"))
	}
	var stdout bytes.Buffer
	if err := run(ctx, []string{"export", "--redis", url, "--key-prefix", st.Prefix, "-"}, cmdOptions{stdout: &stdout}); err != nil {
		t.Fatalf("export -: %v", err)
	}
	if stdout.String() != string(b) {
		t.Errorf("export - wrote\n%s\nwant\n%s", stdout.String(), b)
	}
}

// TestAlsoCounted: a summary names the other kinds of lines only when
// there are some, in the order given.
func TestAlsoCounted(t *testing.T) {
	for _, tc := range []struct {
		in   []counted
		want string
	}{
		{nil, ""},
		{[]counted{{0, "reposts"}, {0, "relations"}}, ""},
		{[]counted{{3, "reposts"}, {0, "relations"}, {1, "audit entries"}}, ", 3 reposts, 1 audit entries"},
	} {
		if got := alsoCounted(tc.in...); got != tc.want {
			t.Errorf("alsoCounted(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
