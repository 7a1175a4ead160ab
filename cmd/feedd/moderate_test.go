package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestModerateBadInput: `feedd reports` and `feedd moderate` refuse a
// missing or unknown action, a flag the action does not take, a missing
// or malformed id, reason or --since, each naming what is wrong, before
// they open anything (no Redis needed).
func TestModerateBadInput(t *testing.T) {
	o := cmdOptions{stdout: io.Discard, flagSetMade: func(fs *flag.FlagSet) { fs.SetOutput(io.Discard) }}
	r := []string{"--redis", "redis://127.0.0.1:1"} // never dialled: every case is refused before
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"moderate"}, "moderate needs an action: takedown, suspend, unsuspend, resolve, log"},
		{[]string{"moderate", "ban", "--user", "2"}, `unknown action "ban"`},
		{[]string{"moderate", "takedown", "--reason", "x"}, "moderate takedown needs --post ID"},
		{[]string{"moderate", "takedown", "--post", "abc", "--reason", "x"}, `--post "abc" is not a post's database id`},
		{[]string{"moderate", "takedown", "--post", "0", "--reason", "x"}, `--post "0" is not`},
		{[]string{"moderate", "takedown", "--post", "5"}, "moderate takedown needs --reason TEXT"},
		{[]string{"moderate", "takedown", "--post", "5", "--reason", "  "}, "needs --reason"},
		{[]string{"moderate", "takedown", "--post", "5", "--user", "2", "--reason", "x"}, "moderate takedown does not take --user"},
		{[]string{"moderate", "suspend", "--reason", "x"}, "moderate suspend needs --user ID"},
		{[]string{"moderate", "suspend", "--user", "-3", "--reason", "x"}, `--user "-3" is not a user's database id`},
		{[]string{"moderate", "unsuspend", "--user", "2"}, "moderate unsuspend needs --reason TEXT"},
		{[]string{"moderate", "unsuspend", "--user", "2", "--reason", "x", "--since", "1-0"}, "does not take --since"},
		{[]string{"moderate", "resolve"}, "moderate resolve needs --report ID"},
		{[]string{"moderate", "resolve", "--report", "12"}, `--report "12" is not a report id`},
		{[]string{"moderate", "suspend", "--user", "2", "--reason", "x", "--operator", " "}, "--operator must name who acts"},
		{[]string{"moderate", "log", "--since", "yesterday"}, `--since "yesterday" is neither an RFC 3339 time`},
		{[]string{"moderate", "log", "--post", "5"}, "moderate log does not take --post"},
		{[]string{"moderate", "log", "extra"}, `moderate takes no arguments, got ["extra"`},
		{[]string{"reports", "--since", "1-x"}, `--since "1-x" is neither`},
		{[]string{"reports", "x"}, `reports takes no arguments`},
	} {
		err := run(context.Background(), append(c.args, r...), o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
	t.Setenv("FEED_REDIS_URL", "")
	for _, args := range [][]string{{"reports"}, {"moderate", "log"}} {
		if err := run(context.Background(), args, o); err == nil || !strings.Contains(err.Error(), "needs --redis") {
			t.Errorf("%q without --redis: %v", args, err)
		}
	}
}

// modEnv is a store for the moderation commands: a service over it
// (what the API and workers would do) and the commands' flags.
type modEnv struct {
	t    *testing.T
	svc  *feedcore.Service
	args []string
}

func newModEnv(t *testing.T) *modEnv {
	t.Helper()
	storetest.RequireReal(t)
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	feedtest.Workers(t, svc)
	return &modEnv{t: t, svc: svc, args: []string{"--redis", os.Getenv(storetest.Env), "--key-prefix", st.Prefix}}
}

// feedd runs a feedd command against the store and returns what it printed.
func (e *modEnv) feedd(args ...string) (string, error) {
	var out bytes.Buffer
	if args[0] == "moderate" {
		args = append(args, "--operator", "olga")
	}
	err := run(context.Background(), append(args, e.args...), cmdOptions{stdout: &out})
	return out.String(), err
}

// ok runs a command that must succeed and say want.
func (e *modEnv) ok(want string, args ...string) string {
	e.t.Helper()
	out, err := e.feedd(args...)
	if err != nil || !strings.Contains(out, want) {
		e.t.Fatalf("feedd %q: %v, printed %q; want it to say %q", args, err, out, want)
	}
	return out
}

// lines decodes JSON Lines into maps.
func lines(t *testing.T, out string) []map[string]string {
	t.Helper()
	var rows []map[string]string
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var m map[string]string
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("not JSON Lines: %v\n%s", err, out)
		}
		rows = append(rows, m)
	}
	return rows
}

// TestModerationCommands runs every moderation command against the test
// store: reports are listed with their state (and from --since), a
// takedown and a suspension take effect on feeds and tokens, a second one
// changes nothing and says so, unsuspend undoes, resolve closes a report,
// unknown ids fail, and every action is in the audit trail.
func TestModerationCommands(t *testing.T) {
	e := newModEnv(t)
	svc, ctx := e.svc, context.Background()
	if _, err := svc.PutUsers(ctx, []feedcore.User{{ID: 1, Handle: "ann"}, {ID: 2, Handle: "bob"}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	bad, err := svc.Publish(ctx, 2, "buy now")
	if err != nil {
		t.Fatal(err)
	}
	fine, err := svc.Publish(ctx, 2, "hello")
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Report(ctx, feedcore.ReportRequest{Reporter: 1, Subject: feedcore.Target{Kind: feedcore.TargetPost, ID: bad.ID},
		Reason: "SPAM", Comment: `"ads" <again>`})
	if err != nil {
		t.Fatal(err)
	}
	feedtest.Drain(t, svc)
	second, err := svc.Report(ctx, feedcore.ReportRequest{Reporter: 1, Subject: feedcore.Target{Kind: feedcore.TargetUser, ID: 2}, Reason: "HARASSMENT"})
	if err != nil {
		t.Fatal(err)
	}

	rows := lines(t, e.ok(`"state":"open"`, "reports"))
	if len(rows) != 2 || rows[0]["id"] != first || rows[0]["reporter"] != "1" || rows[0]["subject"] != "post:"+feedcore.FormatID(bad.ID) ||
		rows[0]["reason"] != "SPAM" || rows[0]["comment"] != `"ads" <again>` || rows[1]["id"] != second || rows[1]["comment"] != "" {
		t.Fatalf("feedd reports: %v", rows)
	}
	if _, err := time.Parse(time.RFC3339Nano, rows[0]["time"]); err != nil {
		t.Errorf("report time %q: %v", rows[0]["time"], err)
	}
	if rows := lines(t, e.ok("", "reports", "--since", first)); len(rows) != 1 || rows[0]["id"] != second {
		t.Errorf("reports --since %s: %v", first, rows)
	}

	post := feedcore.FormatID(bad.ID)
	e.ok("Took down post "+post, "moderate", "takedown", "--post", post, "--reason", "spam ads")
	e.ok("was taken down already; nothing changed", "moderate", "takedown", "--post", post, "--reason", "spam ads")
	if got := feedtest.Feed(t, svc, 1, 100); !slices.Equal(got, []feedcore.ID{fine.ID}) {
		t.Errorf("ann's feed after the takedown: %v, want [%d]", got, fine.ID)
	}
	e.ok("Suspended user 2: 1 posts and 0 live sessions hidden", "moderate", "suspend", "--user", "2", "--reason", "repeat spammer")
	e.ok("User 2 was suspended already; nothing changed", "moderate", "suspend", "--user", "2", "--reason", "again")
	if got := feedtest.Feed(t, svc, 1, 100); len(got) != 0 {
		t.Errorf("ann's feed with bob suspended: %v", got)
	}
	ch := svc.NewCharge(feedcore.Subject{Viewer: 2}, 1, feedcore.RateLimit{})
	if _, err := svc.FollowingFeed(feedcore.WithCharge(ctx, ch), feedcore.FeedRequest{Viewer: 2}); feedcore.CodeOf(err) != "FORBIDDEN" {
		t.Errorf("bob's read while suspended: %v, want FORBIDDEN", err)
	}
	e.ok("Unsuspended user 2: 1 posts and 0 live sessions shown again", "moderate", "unsuspend", "--user", "2", "--reason", "appeal granted")
	e.ok("User 2 is not suspended; nothing changed", "moderate", "unsuspend", "--user", "2", "--reason", "again")
	if got := feedtest.Feed(t, svc, 1, 100); !slices.Equal(got, []feedcore.ID{fine.ID}) {
		t.Errorf("ann's feed after unsuspending bob: %v, want [%d]", got, fine.ID)
	}
	e.ok("Resolved report "+first, "moderate", "resolve", "--report", first)
	e.ok("was resolved already; nothing changed", "moderate", "resolve", "--report", first, "--reason", "twice")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"moderate", "takedown", "--post", "999", "--reason", "x"}, "no post with id 999"},
		{[]string{"moderate", "suspend", "--user", "99", "--reason", "x"}, "no user with id 99"},
		{[]string{"moderate", "unsuspend", "--user", "99", "--reason", "x"}, "no user with id 99"},
		{[]string{"moderate", "resolve", "--report", "1-0"}, "no report with id 1-0"},
	} {
		if _, err := e.feedd(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("feedd %q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
	if rows := lines(t, e.ok(`"state":"resolved"`, "reports")); rows[0]["state"] != "resolved" || rows[0]["resolvedAt"] == "" || rows[1]["state"] != "open" {
		t.Errorf("reports after resolving the first: %v", rows)
	}

	log := lines(t, e.ok(`"operator":"olga"`, "moderate", "log"))
	var got []string
	for _, r := range log {
		got = append(got, r["action"]+" "+r["subject"]+" "+r["reason"]+" "+r["operator"])
		if _, err := time.Parse(time.RFC3339Nano, r["time"]); err != nil || r["id"] == "" {
			t.Errorf("audit line %v: no id or time", r)
		}
	}
	want := []string{"takedown post:" + post + " spam ads olga", "suspend user:2 repeat spammer olga",
		"unsuspend user:2 appeal granted olga", "resolve report:" + first + "  olga"}
	if !slices.Equal(got, want) {
		t.Errorf("feedd moderate log:\n%q\nwant\n%q", got, want)
	}
	if rows := lines(t, e.ok("", "moderate", "log", "--since", log[1]["id"])); len(rows) != 2 || rows[0]["action"] != "unsuspend" {
		t.Errorf("moderate log --since %s: %v", log[1]["id"], rows)
	}
}
