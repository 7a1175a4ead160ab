package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestDurableConfigKeepsDataAcrossRestart starts a Redis of its own from
// deploy/redis.conf (the settings the README recommends), writes a feed,
// shuts Redis down and starts it again on the same directory: every feed
// reads as before. Runs on the real-Redis lanes (it needs redis-server).
func TestDurableConfigKeepsDataAcrossRestart(t *testing.T) {
	storetest.RequireReal(t)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("needs redis-server on PATH")
	}
	conf, err := filepath.Abs(filepath.Join(repoRoot(t), "deploy", "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePort(t)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, conf, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d", port)
	open := func() (*redisstore.Store, *feedcore.Service) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, Timeout: 2 * time.Second})
			if err == nil {
				svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return st, svc
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-server from deploy/redis.conf did not answer: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	srv := start()
	t.Cleanup(func() { _ = srv.Process.Kill(); _, _ = srv.Process.Wait() })
	st, svc := open()
	ctx := context.Background()
	for _, id := range []feedcore.ID{1, 2} {
		if err := svc.PutUser(ctx, feedcore.User{ID: id, Handle: "u" + feedcore.FormatID(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Follow(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	var want []feedcore.ID
	for range 5 {
		p, err := svc.Publish(ctx, 1, "kept")
		if err != nil {
			t.Fatal(err)
		}
		want = append([]feedcore.ID{p.ID}, want...)
	}
	stop := feedtest.Workers(t, svc)
	feedtest.Drain(t, svc)
	stop()
	if got := feedtest.Feed(t, svc, 2, 100); !slices.Equal(got, want) {
		t.Fatalf("before the restart: %v, want %v", got, want)
	}
	// A clean shutdown (as an orchestrator's SIGTERM gives), then a start
	// on the same directory: the AOF is replayed.
	_ = st.Client.Do(ctx, st.Client.B().Shutdown().Build()).Error()
	_, _ = srv.Process.Wait()
	st.Close()
	srv = start()
	st, svc = open()
	defer st.Close()
	if got := feedtest.Feed(t, svc, 2, 100); !slices.Equal(got, want) {
		t.Fatalf("after the restart the follower's feed is %v, want %v", got, want)
	}
	if info, err := st.Client.Do(ctx, st.Client.B().ConfigGet().Parameter("appendonly").Build()).AsStrMap(); err != nil || info["appendonly"] != "yes" {
		t.Fatalf("the server does not run with deploy/redis.conf: %v, %v", info, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); err != nil {
		t.Fatalf("no AOF written: %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
