package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore"
)

// openService opens the store and the feed service over it. The caller
// closes the store.
func openService(ctx context.Context, s *storeFlags, opts feedcore.Options, role string) (*redisstore.Store, *feedcore.Service, error) {
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	st, err := redisstore.Open(ctx, redisstore.Options{URL: s.redisURL, ClientName: clientName(role), MaxFlushDelay: s.flushDelay, Pipelines: s.pipelines})
	if err != nil {
		return nil, nil, err
	}
	svc, err := feedcore.New(ctx, st.Client, opts)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("start feed service: %w", err)
	}
	return st, svc, nil
}

// sharedCommand is the frame of a subcommand that only makes sense on a
// Redis other processes share (worker, import, export, rebuild): its
// flags, its arguments, and the store it opens and closes around its work.
type sharedCommand struct {
	name string
	// usage is the line -h prints above the flags; empty: the flag
	// package's own.
	usage string
	// files is how many file arguments the command takes: 0 or 1.
	files int
	// instead says what to do when no --redis was given.
	instead string
	// flags, when set, defines the command's flags besides the store's.
	flags func(fs *flag.FlagSet)
	// check, when set, checks them once they are parsed.
	check func() error
}

// run parses args, opens the shared store and the feed service over it,
// runs work with them and the command's arguments, and closes the store.
func (c sharedCommand) run(ctx context.Context, args []string, o cmdOptions, work func(svc *feedcore.Service, store *storeFlags, args []string) error) error {
	fs := o.flagSet(c.name)
	store := addStoreFlags(fs)
	if c.flags != nil {
		c.flags(fs)
	}
	if c.usage != "" {
		fs.Usage = func() {
			fmt.Fprintln(fs.Output(), "usage: "+c.usage)
			fs.PrintDefaults()
		}
	}
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := checkArgs(fs, c.files); err != nil {
		fs.Usage()
		return err
	}
	if c.check != nil {
		if err := c.check(); err != nil {
			return err
		}
	}
	if store.embedded() {
		return fmt.Errorf("%s needs --redis: %s", c.name, c.instead)
	}
	opts := store.options()
	if c.name == "import" || c.name == "export" || c.name == "rebuild" {
		// They serve no subscriptions and the workers tell what their
		// records cause: no notices, no presence questions.
		opts.Notices = feedcore.NoticesOff
	}
	st, svc, err := openService(ctx, store, opts, c.name)
	if err != nil {
		return err
	}
	defer st.Close()
	return work(svc, store, fs.Args())
}

// clientName tells replicas apart in CLIENT LIST and worker consumer names.
func clientName(role string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "feedd"
	}
	return fmt.Sprintf("feedd-%s-%s-%d", role, host, os.Getpid())
}
