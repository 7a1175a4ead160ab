package feedcore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// openFake opens a client and a Service on a fake Redis at addr.
func openFake(t *testing.T, addr string, single bool) (rueidis.Client, *Service) {
	t.Helper()
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: "redis://" + addr,
		Timeout: 2 * time.Second, DisableCache: true, SingleNode: single})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	svc, err := New(context.Background(), st.Client, Options{CursorKey: []byte("test-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	return st.Client, svc
}

// TestStoreErrorCodes runs commands, a write and a read against Redis
// servers answering every way a Redis or Redis Cluster says "try again",
// and a few ways it says "you are wrong": the first are UNAVAILABLE, the
// rest INTERNAL, however deep feedcore wrapped them.
func TestStoreErrorCodes(t *testing.T) {
	cases := []struct {
		reply string
		want  Code
	}{
		{"CLUSTERDOWN The cluster is down", CodeUnavailable},
		{"CLUSTERDOWN Hash slot not served", CodeUnavailable},
		{"TRYAGAIN Multiple keys request during rehashing of slot", CodeUnavailable},
		{"LOADING Redis is loading the dataset in memory", CodeUnavailable},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", CodeUnavailable},
		{"READONLY You can't write against a read only replica.", CodeUnavailable},
		{"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", CodeUnavailable},
		{"NOREPLICAS Not enough good replicas to write.", CodeUnavailable},
		{"MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.", CodeUnavailable},
		{"OOM command not allowed when used memory > 'maxmemory'.", CodeUnavailable},
		{"ERR wrong number of arguments for 'get' command", CodeInternal},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", CodeInternal},
		{"BUSYGROUP Consumer Group name already exists", CodeInternal},
		{"BUSYKEY Target key name already exists.", CodeInternal},
	}
	for _, c := range cases {
		t.Run(strings.Fields(c.reply)[0], func(t *testing.T) {
			f := storetest.NewFake(t, storetest.ErrorReply(c.reply))
			client, svc := openFake(t, f.Addr, true)
			checkCodes(t, client, svc, c.want)
		})
	}
}

// checkCodes asserts a raw command, a publish and a profile read all fail
// with want. rueidis retries read-only commands on some replies until the
// deadline is near, as it does within a request's timeout, so each call
// gets a short one.
func checkCodes(t *testing.T, client rueidis.Client, svc *Service, want Code) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := client.Do(ctx, client.B().Get().Key("k").Build()).Error()
	if err == nil {
		t.Fatal("GET succeeded")
	}
	if got := CodeOf(err); got != want {
		t.Errorf("GET: %v: code %s, want %s", err, got, want)
	}
	if got := CodeOf(fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", err))); got != want {
		t.Errorf("GET wrapped twice: code %s, want %s", got, want)
	}
	if _, err := svc.Publish(ctx, 1, "hello"); CodeOf(err) != want {
		t.Errorf("Publish: %v: code %s, want %s", err, CodeOf(err), want)
	}
	if _, err := svc.User(ctx, 1); CodeOf(err) != want {
		t.Errorf("User: %v: code %s, want %s", err, CodeOf(err), want)
	}
}

func TestUnreachableStoreIsUnavailable(t *testing.T) {
	t.Run("connection dropped", func(t *testing.T) {
		f := storetest.NewFake(t, func([]string) string { return storetest.Drop })
		client, svc := openFake(t, f.Addr, true)
		checkCodes(t, client, svc, CodeUnavailable)
	})
	t.Run("server silent past the deadline", func(t *testing.T) {
		f := storetest.NewFake(t, func([]string) string { return storetest.Hang })
		client, svc := openFake(t, f.Addr, true)
		checkCodes(t, client, svc, CodeUnavailable)
	})
	t.Run("server gone: connection refused", func(t *testing.T) {
		f := storetest.NewFake(t, storetest.ErrorReply("ERR unused"))
		client, svc := openFake(t, f.Addr, true)
		f.Close()
		checkCodes(t, client, svc, CodeUnavailable)
	})
	t.Run("open against a closed port", func(t *testing.T) {
		f := storetest.NewFake(t, storetest.ErrorReply("ERR unused"))
		f.Close()
		_, err := redisstore.Open(context.Background(), redisstore.Options{URL: "redis://" + f.Addr, Timeout: time.Second})
		if err == nil || CodeOf(err) != CodeUnavailable {
			t.Fatalf("Open: %v: code %s", err, CodeOf(err))
		}
	})
	t.Run("client closing", func(t *testing.T) {
		f := storetest.NewFake(t, storetest.ErrorReply("ERR unused"))
		client, svc := openFake(t, f.Addr, true)
		client.Close()
		checkCodes(t, client, svc, CodeUnavailable)
	})
	t.Run("cluster slot with no node", func(t *testing.T) {
		// A cluster whose one node serves slots 0-100 only: key "k"
		// (slot 7629) has no node.
		var f *storetest.Fake
		f = storetest.NewFake(t, func(cmd []string) string {
			if strings.EqualFold(cmd[0], "CLUSTER") {
				host, port, _ := strings.Cut(f.Addr, ":")
				return fmt.Sprintf("*1\r\n*3\r\n:0\r\n:100\r\n*2\r\n$%d\r\n%s\r\n:%s\r\n", len(host), host, port)
			}
			return "-ERR unexpected\r\n"
		})
		client, svc := openFake(t, f.Addr, false)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := client.Do(ctx, client.B().Get().Key("k").Build()).Error()
		if !errors.Is(err, rueidis.ErrNoSlot) {
			t.Fatalf("GET: %v, want ErrNoSlot", err)
		}
		checkCodes(t, client, svc, CodeUnavailable)
	})
}
