// Command feedd is the feedd binary: a GraphQL backend-for-frontend for the
// Following tab's feeds.
//
//	feedd [serve] [flags]        serve GraphQL (the default subcommand)
//	feedd worker [flags]         run only the fan-out workers
//	feedd import [flags] FILE    load a JSON Lines file into the store
//	feedd token --user ID        mint a bearer token for --jwt-secret
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
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// commands maps subcommand names to their entry points.
var commands = map[string]func(ctx context.Context, args []string, stdout io.Writer) error{
	"serve":  runServe,
	"worker": runWorker,
	"import": runImport,
	"token":  runToken,
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
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
func run(ctx context.Context, args []string, stdout io.Writer) error {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", name, usage)
	}
	return cmd(ctx, args, stdout)
}

const usage = `usage:
  feedd [serve] [flags]        serve GraphQL at /query and GraphiQL at / (default)
  feedd worker [flags]         run only the fan-out workers (needs --redis)
  feedd import [flags] FILE    load a JSON Lines file (needs --redis; - reads stdin)
  feedd token --user ID        print a bearer token signed with --jwt-secret
Run "feedd COMMAND -h" for a command's flags.
`
