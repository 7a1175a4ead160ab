package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRealtimeFlags(t *testing.T) {
	var stderr bytes.Buffer
	f, err := parseFlags([]string{"--skip-build", "--subscribers", "10", "--url", "https://feedd.example/query"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	rt := f.load.Realtime
	if rt.Subscribers != 10 || rt.WSURL != "wss://feedd.example/query" || rt.NoticePosts != 20 || rt.NoticeGap != time.Second ||
		rt.NoticeTimeout != 10*time.Second || rt.FanoutPosts != 0 || rt.OpenConcurrency != 64 {
		t.Errorf("--subscribers 10: %+v", rt)
	}
	if f, err := parseFlags([]string{"--skip-build"}, &stderr); err != nil || f.load.Realtime.Subscribers != 0 || f.load.Realtime.WSURL != "" {
		t.Errorf("default: %+v, %v", f.load.Realtime, err)
	}
	t.Run("env", func(t *testing.T) {
		t.Setenv("FEED_SUBSCRIBERS", "3")
		if f, err := parseFlags([]string{"--redis", "redis://x", "--fanout-posts", "50", "--notice-posts", "0"}, &stderr); err != nil ||
			f.load.Realtime.Subscribers != 3 || f.load.Realtime.FanoutPosts != 50 || f.load.Realtime.NoticePosts != 0 ||
			f.load.Realtime.WSURL != "ws://127.0.0.1:8080/query" {
			t.Errorf("FEED_SUBSCRIBERS=3 --fanout-posts 50: %+v, %v", f.load.Realtime, err)
		}
	})
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--skip-build", "--subscribers", "-1"}, "--subscribers must not be negative"},
		{[]string{"--skip-build", "--notice-posts", "5"}, "need --subscribers"},
		{[]string{"--skip-build", "--fanout-posts", "5"}, "need --subscribers"},
		{[]string{"--skip-build", "--subscribers", "10", "--compare", "http://127.0.0.1:2/query"}, "not with --compare"},
		{[]string{"--skip-build", "--subscribers", "10", "--fanout-posts", "100"}, "--fanout-posts needs --redis"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-timeout", "0s"}, "--notice-timeout must be positive"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-gap", "-1s"}, "--notice-gap must not be negative"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-posts", "-1"}, "must not be negative"},
		{[]string{"--skip-build", "--subscribers", "10", "--subscribe-concurrency", "0"}, "--subscribe-concurrency"},
		{[]string{"--skip-build", "--subscribers", "10", "--url", "ftp://feedd/query"}, "--url"},
	} {
		if _, err := parseFlags(tc.args, &stderr); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.wantErr)
		}
	}
}
