package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// Operators' commands on reports (feedcore's safety_report.go and
// safety_moderation.go hold the logic): reading reports, acting on them,
// reading the audit trail. They parse flags and print; JSON Lines go to
// stdout, oldest first.

// runReports prints the reports filed from --since on as JSON Lines.
func runReports(ctx context.Context, args []string, o cmdOptions) error {
	var since string
	var sc feedcore.Since
	return sharedCommand{
		name:    "reports",
		usage:   "feedd reports --redis URL [--key-prefix P] [--since TIME|ID]",
		instead: "reports are kept in the Redis the servers share",
		flags:   func(fs *flag.FlagSet) { addSinceFlag(fs, &since) },
		check:   func() (err error) { sc, err = parseSince(since); return err },
	}.run(ctx, args, o, func(svc *feedcore.Service, _ *storeFlags, _ []string) error {
		enc := jsonLines(o.stdout)
		return svc.Reports(ctx, sc, func(rs []feedcore.Report) error {
			for _, r := range rs {
				if err := enc.Encode(reportLine(r)); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func addSinceFlag(fs *flag.FlagSet, since *string) {
	fs.StringVar(since, "since", "", "feedd reports and feedd moderate log: start at this RFC 3339 time (2026-11-25T10:00:00Z), or after this id (a report's or an audit entry's, 1764064800000-0); empty: from the first")
}

// parseSince reads --since for a command's check.
func parseSince(v string) (feedcore.Since, error) {
	sc, err := feedcore.ParseSince(v)
	if err != nil {
		return sc, fmt.Errorf("--since %q is neither an RFC 3339 time like 2026-11-25T10:00:00Z nor an id like 1764064800000-0", v)
	}
	return sc, nil
}

// jsonLines encodes one JSON object a line, HTML left alone.
func jsonLines(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// reportJSON is a line of `feedd reports`.
type reportJSON struct {
	ID         string `json:"id"`
	Time       string `json:"time"`
	Reporter   string `json:"reporter"`
	Subject    string `json:"subject"`
	Reason     string `json:"reason"`
	Comment    string `json:"comment"`
	State      string `json:"state"`
	ResolvedAt string `json:"resolvedAt,omitempty"`
}

func reportLine(r feedcore.Report) reportJSON {
	out := reportJSON{ID: r.ID, Time: stamp(r.At), Reporter: feedcore.FormatID(r.Reporter), Subject: r.Subject.String(),
		Reason: r.Reason, Comment: r.Comment, State: "open"}
	if !r.Resolved.IsZero() {
		out.State, out.ResolvedAt = "resolved", stamp(r.Resolved)
	}
	return out
}

// auditJSON is a line of `feedd moderate log`.
type auditJSON struct {
	ID       string `json:"id"`
	Time     string `json:"time"`
	Operator string `json:"operator"`
	Action   string `json:"action"`
	Subject  string `json:"subject"`
	Reason   string `json:"reason"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// moderateActions are the actions of `feedd moderate`, in the order usage
// lists them.
var moderateActions = []string{"takedown", "suspend", "unsuspend", "resolve", "log"}

const moderateUsage = `feedd moderate ACTION --redis URL [--key-prefix P] [--operator NAME] ...
  takedown --post ID --reason TEXT     take a post down: it leaves every feed, as a delete does
  suspend --user ID --reason TEXT      suspend an account: FORBIDDEN on every request, its posts and live sessions hidden
  unsuspend --user ID --reason TEXT    lift a suspension: everything comes back
  resolve --report ID [--reason TEXT]  close a report
  log [--since TIME|ID]                print the audit trail as JSON Lines
Every action goes to the audit trail with --operator; doing one twice changes nothing and says so.`

// modFlags are the flags of `feedd moderate`, one set for every action
// (each takes those its rules allow).
type modFlags struct {
	post, user, report, reason, operator, since string
}

func (f *modFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.post, "post", "", "feedd moderate takedown: the post's database id")
	fs.StringVar(&f.user, "user", "", "feedd moderate suspend and unsuspend: the account's database id")
	fs.StringVar(&f.report, "report", "", "feedd moderate resolve: the report's id (feedd reports lists them)")
	fs.StringVar(&f.reason, "reason", "", "feedd moderate: why, for the audit trail (required but for resolve)")
	fs.StringVar(&f.operator, "operator", defaultOperator(), "feedd moderate: who acts, for the audit trail")
	addSinceFlag(fs, &f.since)
}

// defaultOperator is $USER, or "cli".
func defaultOperator() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "cli"
}

// check refuses flags action does not take, and missing or malformed ones.
func (f *modFlags) check(action string) error {
	given := map[string]bool{"post": f.post != "", "user": f.user != "", "report": f.report != "", "since": f.since != ""}
	takes := map[string][]string{"takedown": {"post"}, "suspend": {"user"}, "unsuspend": {"user"}, "resolve": {"report"}, "log": {"since"}}
	var extra []string
	for _, name := range []string{"post", "user", "report", "since"} {
		if given[name] && !slices.Contains(takes[action], name) {
			extra = append(extra, "--"+name)
		}
	}
	needsReason := action != "resolve" && action != "log"
	return firstBroken(
		flagRule{action == "", "moderate needs an action: " + strings.Join(moderateActions, ", ")},
		flagRule{!slices.Contains(moderateActions, action), fmt.Sprintf("moderate: unknown action %q; want one of %s", action, strings.Join(moderateActions, ", "))},
		flagRule{len(extra) > 0, fmt.Sprintf("moderate %s does not take %s", action, strings.Join(extra, ", "))},
		flagRule{action == "takedown" && f.post == "", "moderate takedown needs --post ID"},
		flagRule{(action == "suspend" || action == "unsuspend") && f.user == "", "moderate " + action + " needs --user ID"},
		flagRule{action == "resolve" && f.report == "", "moderate resolve needs --report ID"},
		flagRule{f.post != "" && !positiveID(f.post), fmt.Sprintf("--post %q is not a post's database id (a positive number)", f.post)},
		flagRule{f.user != "" && !positiveID(f.user), fmt.Sprintf("--user %q is not a user's database id (a positive number)", f.user)},
		flagRule{f.report != "" && !feedcore.ValidEntryID(f.report), fmt.Sprintf("--report %q is not a report id (like 1764064800000-0)", f.report)},
		flagRule{needsReason && strings.TrimSpace(f.reason) == "", "moderate " + action + " needs --reason TEXT: it goes to the audit trail"},
		flagRule{action != "log" && strings.TrimSpace(f.operator) == "", "--operator must name who acts"},
	)
}

func positiveID(s string) bool {
	id, err := feedcore.ParseID(s)
	return err == nil && id > 0
}

// runModerate runs `feedd moderate ACTION [flags]`.
func runModerate(ctx context.Context, args []string, o cmdOptions) error {
	action := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	var f modFlags
	var sc feedcore.Since
	return sharedCommand{
		name:    "moderate",
		usage:   moderateUsage,
		instead: "moderation acts on the Redis the servers share",
		flags:   f.add,
		check: func() (err error) {
			if err = f.check(action); err == nil {
				sc, err = parseSince(f.since)
			}
			return err
		},
	}.run(ctx, args, o, func(svc *feedcore.Service, _ *storeFlags, _ []string) error {
		if action == "log" {
			return printAudit(ctx, svc, sc, o.stdout)
		}
		return f.act(ctx, svc, action, o.stdout)
	})
}

// act runs a moderation action and says what it did.
func (f *modFlags) act(ctx context.Context, svc *feedcore.Service, action string, stdout io.Writer) error {
	a := feedcore.ModAction{Operator: f.operator, Reason: f.reason}
	post, _ := feedcore.ParseID(f.post)
	user, _ := feedcore.ParseID(f.user)
	start := time.Now()
	var (
		out       feedcore.ModOutcome
		err       error
		done, was string
	)
	switch action {
	case "takedown":
		out, err = svc.Takedown(ctx, post, a)
		done, was = fmt.Sprintf("Took down post %d", post), fmt.Sprintf("Post %d was taken down already", post)
	case "suspend":
		out, err = svc.Suspend(ctx, user, a)
		done = fmt.Sprintf("Suspended user %d: %d posts and %d live sessions hidden", user, out.Posts, out.Sessions)
		was = fmt.Sprintf("User %d was suspended already", user)
	case "unsuspend":
		out, err = svc.Unsuspend(ctx, user, a)
		done = fmt.Sprintf("Unsuspended user %d: %d posts and %d live sessions shown again", user, out.Posts, out.Sessions)
		was = fmt.Sprintf("User %d is not suspended", user)
	case "resolve":
		out, err = svc.ResolveReport(ctx, f.report, a)
		done, was = "Resolved report "+f.report, "Report "+f.report+" was resolved already"
	}
	if err != nil {
		return err
	}
	if !out.Changed {
		fmt.Fprintf(stdout, "%s; nothing changed.\n", was)
		return nil
	}
	fmt.Fprintf(stdout, "%s, in %v (audit: %s).\n", done, time.Since(start).Round(time.Millisecond), a.Operator)
	return nil
}

// printAudit prints the audit trail from sc on as JSON Lines.
func printAudit(ctx context.Context, svc *feedcore.Service, sc feedcore.Since, stdout io.Writer) error {
	enc := jsonLines(stdout)
	return svc.AuditLog(ctx, sc, func(es []feedcore.AuditEntry) error {
		for _, e := range es {
			if err := enc.Encode(auditJSON{ID: e.ID, Time: stamp(e.At), Operator: e.Operator, Action: e.Action,
				Subject: e.Subject, Reason: e.Reason}); err != nil {
				return err
			}
		}
		return nil
	})
}
