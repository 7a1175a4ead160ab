// Command feedd is the feedd binary: a GraphQL backend-for-frontend for the
// Following tab's feeds.
//
//	feedd [serve] [flags]        serve GraphQL (the default subcommand)
//	feedd worker [flags]         run only the fan-out workers
//	feedd import [flags] FILE    load a JSON Lines file into the store
//	feedd export [flags] FILE    write every record of the store as JSON Lines
//	feedd rebuild [flags]        recompute every derived structure from the records
//	feedd reports [flags]        print the reports as JSON Lines
//	feedd moderate ACTION [flags] take down, suspend, unsuspend, resolve; log prints the audit trail
//	feedd token --user ID        mint a bearer token for --jwt-secret
//	feedd version                print the module version and commit
//
// With no flags at all, `go run ./cmd/feedd` serves an embedded store with
// demo data and development auth at http://localhost:8080/. Every flag can
// also be set with an environment variable: FEED_ and the flag's name in
// upper snake case (FEED_ADDR, FEED_JWT_SECRET...), FEED_REDIS_URL for
// --redis. A flag on the command line wins over its variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// commands maps subcommand names to their entry points.
var commands = map[string]func(ctx context.Context, args []string, o cmdOptions) error{
	"serve":    runServe,
	"worker":   runWorker,
	"import":   runImport,
	"export":   runExport,
	"rebuild":  runRebuild,
	"reports":  runReports,
	"moderate": runModerate,
	"token":    runToken,
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], cmdOptions{stdout: os.Stdout})
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the flag package printed the usage
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "feedd:", err)
		os.Exit(1)
	}
}

// run picks the subcommand: the first argument when it names one, serve
// otherwise (so `feedd --addr :9000` serves).
func run(ctx context.Context, args []string, o cmdOptions) error {
	name := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		name, args = args[0], args[1:]
	}
	switch name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(o.stdout, usage)
		return nil
	case "version":
		fmt.Fprintln(o.stdout, version())
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", name, usage)
	}
	return cmd(ctx, args, o)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// version is the module version and VCS commit the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "feedd (no build information)"
	}
	v, commit, dirty := bi.Main.Version, "unknown", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	return fmt.Sprintf("feedd %s, commit %s%s, %s", v, commit, dirty, bi.GoVersion)
}

const usage = `usage:
  feedd [serve] [flags]        serve GraphQL at /query and GraphiQL at / (default)
  feedd worker [flags]         run only the fan-out workers (needs --redis)
  feedd import [flags] FILE    load a JSON Lines file (needs --redis; - reads stdin)
  feedd export [flags] FILE    write every record as import lines (needs --redis; - writes stdout)
  feedd rebuild [flags]        recompute inboxes, outboxes, big-V and active sets from the records (needs --redis)
  feedd reports [flags]        print the reports filed, as JSON Lines, oldest first (needs --redis)
  feedd moderate ACTION [flags]  takedown, suspend, unsuspend, resolve a report; log prints the audit trail (needs --redis)
  feedd token --user ID        print a bearer token signed with --jwt-secret
  feedd version                print the module version and commit
  feedd help                   print this
Run "feedd COMMAND -h" for a command's flags (serve's with "feedd serve -h").
`
