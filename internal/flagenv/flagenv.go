// Package flagenv parses a command's flags with defaults from FEED_*
// environment variables, the convention shared by feedd and feedload: flag
// --inbox-cap is FEED_INBOX_CAP, --redis is FEED_REDIS_URL.
package flagenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Name is the environment variable that sets flag name.
func Name(name string) string {
	if name == "redis" {
		return "FEED_REDIS_URL"
	}
	return "FEED_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Parse reads environment defaults, then args, and returns the names of the
// flags set by either: some defaults depend on whether a flag was given.
// Each flag's usage gains its variable's name.
func Parse(fs *flag.FlagSet, args []string) (map[string]bool, error) {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := Name(f.Name)
		f.Usage += " [$" + env + "]"
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q (for --%s): %w", env, v, f.Name, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, nil
}
