package main

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// TestStreamFlags: the subscription flags, from the command line or the
// environment, become the realtime layer's options and the streams'
// limits; a value that cannot work is refused, naming its flag.
func TestStreamFlags(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		args     []string
		limits   server.StreamLimits
		realtime feedcore.RealtimeOptions
		err      string
	}{
		{name: "defaults",
			limits: server.StreamLimits{MaxConnections: 10000, InitTimeout: 10 * time.Second, PingInterval: 20 * time.Second,
				WriteTimeout: 10 * time.Second},
			realtime: feedcore.RealtimeOptions{MinInterval: time.Second, MaxPerViewer: 10}},
		{name: "given", env: map[string]string{"FEED_MAX_CONNECTIONS": "50", "FEED_SUBSCRIPTION_MIN_INTERVAL": "250ms"},
			args: []string{"--max-subscriptions-per-viewer", "3", "--ws-init-timeout", "2s", "--ws-max-message", "4096",
				"--stream-ping-interval", "15s", "--stream-write-timeout", "3s"},
			limits: server.StreamLimits{MaxConnections: 50, InitTimeout: 2 * time.Second, MaxMessageBytes: 4096,
				PingInterval: 15 * time.Second, WriteTimeout: 3 * time.Second},
			realtime: feedcore.RealtimeOptions{MinInterval: 250 * time.Millisecond, MaxPerViewer: 3}},
		{name: "no interval", args: []string{"--subscription-min-interval", "0"}, err: "--subscription-min-interval"},
		{name: "no subscriptions", args: []string{"--max-subscriptions-per-viewer", "0"}, err: "--max-subscriptions-per-viewer"},
		{name: "no connections", args: []string{"--max-connections", "0"}, err: "--max-connections"},
		{name: "negative message", args: []string{"--ws-max-message", "-1"}, err: "--ws-max-message"},
		{name: "no write time", args: []string{"--stream-write-timeout", "0s"}, err: "--stream-write-timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			s := addStreamFlags(fs)
			if _, err := parse(fs, c.args); err != nil {
				t.Fatal(err)
			}
			err := s.check()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.limits(); got != c.limits {
				t.Errorf("limits %+v, want %+v", got, c.limits)
			}
			if got := s.realtime(); got != c.realtime {
				t.Errorf("realtime %+v, want %+v", got, c.realtime)
			}
		})
	}
}
