// Package redisstore opens the Redis feedd stores its data in: a real Redis or
// Redis Cluster given by URL, or, when no URL is given, an embedded miniredis
// so that `go run ./cmd/feedd` works on a machine with nothing installed.
package redisstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/feedd/feedd/roundtrip"
)

// Options says which Redis to open.
type Options struct {
	// URL is redis://host:port[/db] or rediss://...; more seed addresses
	// follow as addr= query parameters (rueidis.ParseURL), as in
	// redis://a:6379?addr=b:6379&addr=c:6379. Any one seed that answers is
	// enough: for a Redis Cluster it leads to all the nodes; for a single
	// Redis, the first seed that answers is the server. Empty means the
	// embedded store.
	URL string
	// Timeout bounds each command's wait on a silent server, so a Redis that
	// stops answering fails requests instead of hanging them. Default 5s.
	Timeout time.Duration
	// ClientName is shown in CLIENT LIST, to tell replicas apart.
	ClientName string
	// MaxFlushDelay is rueidis's ClientOption.MaxFlushDelay: how long a
	// connection's writer waits, after each write, for more commands to
	// send with the next. Under load one write (one system call, here and
	// in Redis) then carries the commands of many requests, at a cost of
	// at most this much latency a round trip. 0: write at once.
	MaxFlushDelay time.Duration
	// Pipelines is how many connections to each Redis node carry the
	// pipelined commands (rueidis's PipelineMultiplex, as a count: 1, 2,
	// 4 or 8); 0 means 1, as rueidis gives a cluster's nodes. More lets
	// several cores parse replies at once, but rueidis then splits a
	// request's multi-key read over the connections, a goroutine each,
	// and each connection writes (a system call) on its own: on two cores
	// one connection measured 0.93x feedd's CPU a first live page
	// (docs/performance.md).
	Pipelines int
	// DisableCache turns rueidis's client-side cache off, for servers
	// without CLIENT TRACKING (a miniredis reached by URL).
	DisableCache bool
	// SingleNode talks to the URL's address only, never to nodes a server
	// advertises (a miniredis answers CLUSTER SLOTS with its own address,
	// which would bypass a proxy in front of it).
	SingleNode bool
	// Dial, when set, opens every connection to addr (a node of the URL
	// or one a cluster advertises), so tests can put a proxy in between.
	Dial func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error)
}

// Store is an open Redis connection.
type Store struct {
	Client rueidis.Client
	// Embedded is the in-process server when no URL was given, else nil.
	Embedded *miniredis.Miniredis
	// stopClock ends the embedded store's clock (see runClock).
	stopClock func()
}

// Open connects and checks the server answers.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	var (
		opt rueidis.ClientOption
		emb *miniredis.Miniredis
		err error
	)
	if o.URL == "" {
		emb = miniredis.NewMiniRedis()
		if err := emb.Start(); err != nil {
			return nil, fmt.Errorf("start embedded store: %w", err)
		}
		opt = rueidis.ClientOption{InitAddress: []string{emb.Addr()}}
	} else {
		opt, err = rueidis.ParseURL(o.URL)
		if err != nil {
			return nil, fmt.Errorf("bad Redis URL %q (want redis://host:port[/db]): %w", o.URL, err)
		}
	}
	if emb != nil {
		// miniredis has no client-side caching; DoCache then falls back to
		// plain reads, so the code path stays one.
		opt.DisableCache = true
		opt.ForceSingleClient = true
	}
	opt.MaxFlushDelay = o.MaxFlushDelay
	opt.PipelineMultiplex = -1 // one connection; rueidis reads 0 as its own choice
	if o.Pipelines > 1 {
		opt.PipelineMultiplex = bits.Len(uint(o.Pipelines)) - 1
	}
	if o.DisableCache {
		opt.DisableCache = true
	}
	if o.SingleNode {
		opt.ForceSingleClient = true
	}
	if o.Dial != nil {
		opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
			conn, err := o.Dial(ctx, addr, d)
			if err != nil || tc == nil {
				return conn, err
			}
			return tls.Client(conn, tc), nil // rediss://: TLS over the given connection
		}
	}
	opt.ClientName = o.ClientName
	opt.ConnWriteTimeout = o.Timeout
	client, err := connect(ctx, opt, o.Timeout)
	if err != nil {
		if emb != nil {
			emb.Close()
		}
		return nil, fmt.Errorf("connect to Redis at %s: %w (is redis-server running? start it or leave --redis empty for the embedded store)", addrOf(o.URL), err)
	}
	// Every call is charged to the round-trip counter of its request.
	st := &Store{Client: roundtrip.Wrap(client), Embedded: emb, stopClock: func() {}}
	if emb != nil {
		st.stopClock = runClock(emb)
	}
	return st, nil
}

// clockTick is how often the embedded store's keys age, at the most.
const clockTick = 100 * time.Millisecond

// runClock makes the embedded store's TTLs run in real time, as on Redis:
// miniredis only ages keys when told to (FastForward), so without this no
// snapshot, persisted query or checkpoint would ever expire. FastForward
// walks every key under the server's lock, so the clock waits at least
// twenty times as long as the last walk took before the next: it costs
// the store at most a twentieth of its time, and a large store's TTLs run
// out a little late rather than slowing every command. It returns a func
// that stops it.
func runClock(m *miniredis.Miniredis) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		last := time.Now()
		wait := clockTick
		for {
			t := time.NewTimer(wait)
			select {
			case <-done:
				t.Stop()
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
				wait = min(max(clockTick, 20*time.Since(now)), 10*time.Second)
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// connect opens a client with opt and checks it answers a PING. With
// several seed addresses rueidis starts from any seed that answers when
// they lead to a Redis Cluster; a single Redis (or ForceSingleClient)
// talks to one address only, so the seeds are then tried in order and the
// first that answers is used.
func connect(ctx context.Context, opt rueidis.ClientOption, timeout time.Duration) (rueidis.Client, error) {
	if !opt.ForceSingleClient {
		client, err := open(ctx, opt, timeout)
		if err == nil || len(opt.InitAddress) == 1 || !clusterDisabled(err) {
			return client, err
		}
		// Several seeds, and the one that answered is not a cluster node.
	}
	var errs []error
	for _, addr := range opt.InitAddress {
		one := opt
		one.InitAddress = []string{addr}
		one.ForceSingleClient = true
		client, err := open(ctx, one, timeout)
		if err == nil {
			return client, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return nil, errors.Join(errs...)
}

func open(ctx context.Context, opt rueidis.ClientOption, timeout time.Duration) (rueidis.Client, error) {
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := Ping(pctx, client); err != nil {
		client.Close()
		return nil, fmt.Errorf("ping: %w", err)
	}
	return client, nil
}

// clusterDisabled reports the answer of a Redis without cluster support to
// the cluster discovery rueidis starts with ("ERR This instance has
// cluster support disabled", or "command is not allowed" behind proxies).
func clusterDisabled(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "cluster support disabled") || strings.Contains(msg, "command is not allowed") ||
		strings.Contains(msg, "unknown command")
}

// Ping checks Redis answers. On a Redis Cluster it asks every node of the
// current topology at once and succeeds when one answers: rueidis sends a
// keyless PING down any connection it holds, the URL's seed addresses
// included, so a dead seed would fail a plain PING at random.
func Ping(ctx context.Context, c rueidis.Client) error {
	if c.Mode() != rueidis.ClientModeCluster {
		return c.Do(ctx, c.B().Ping().Build()).Error()
	}
	nodes := c.Nodes()
	// The PINGs left running when one answers may be dialing their node:
	// they keep ctx's deadline but not its cancellation, since a dial
	// cancelled half-way fails the next command on that connection too.
	pctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		pctx, cancel = context.WithDeadline(pctx, dl)
	}
	var wg sync.WaitGroup
	answers := make(chan error, len(nodes))
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- n.Do(pctx, n.B().Ping().Build()).Error()
		}()
	}
	go func() { wg.Wait(); cancel() }()
	var errs []error
	for range nodes {
		err := <-answers
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return errors.New("no Redis Cluster node known")
	}
	return errors.Join(errs...)
}

// Close closes the client and the embedded server, if any.
func (s *Store) Close() {
	s.Client.Close()
	s.stopClock()
	if s.Embedded != nil {
		s.Embedded.Close()
	}
}

func addrOf(url string) string {
	if url == "" {
		return "the embedded store"
	}
	return url
}
