package main

import (
	"context"
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
	st, err := redisstore.Open(ctx, redisstore.Options{URL: s.redisURL, ClientName: clientName(role)})
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

// openShared is openService for the subcommands that only make sense on a
// Redis other processes share (worker, import, export, rebuild); instead
// says what to do when no --redis was given.
func openShared(ctx context.Context, s *storeFlags, role, instead string) (*redisstore.Store, *feedcore.Service, error) {
	if s.embedded() {
		return nil, nil, fmt.Errorf("%s needs --redis: %s", role, instead)
	}
	return openService(ctx, s, s.options(), role)
}

// clientName tells replicas apart in CLIENT LIST and worker consumer names.
func clientName(role string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "feedd"
	}
	return fmt.Sprintf("feedd-%s-%s-%d", role, host, os.Getpid())
}
