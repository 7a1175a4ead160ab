package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/redis/rueidis"
)

// FaultsEnv must be "1" for the tests that kill cluster nodes: they run
// alone, never beside other packages' tests on the same cluster.
const FaultsEnv = "FEED_TEST_FAULTS"

// repoRoot is the repository's top directory, found from this file's path.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the test's source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// cluster is the local Redis Cluster of .ci/cluster.sh that FEED_TEST_REDIS
// names: its nodes' ports and state directory.
type cluster struct {
	t     *testing.T
	host  string
	ports []int
	dir   string // $FEED_CLUSTER_DIR: one subdirectory per port
}

// node is one line of CLUSTER NODES.
type node struct {
	id, master string // master: the id of the master of a replica, "-" for a master
	port       int
	flags      []string
	slots      bool
}

func (n node) has(flag string) bool { return slices.Contains(n.flags, flag) }

// faultCluster is the store of a test that kills cluster masters, and
// the cluster to kill them in; it skips the test off the cluster lane or
// without FaultsEnv. Its cleanup, which runs before the store's (which
// needs every master), leaves all six nodes up and synced for later
// tests, even when the test fails.
func faultCluster(t *testing.T) (*storetest.Store, *cluster) {
	t.Helper()
	storetest.RequireReal(t)
	st := storetest.New(t)
	if !st.Cluster() {
		t.Skip("needs the Redis Cluster lane (FEED_TEST_REDIS=$(.ci/cluster.sh url)): a single Redis has no failover")
	}
	if os.Getenv(FaultsEnv) != "1" {
		t.Skipf("kills cluster masters, which fails other packages' tests running at the same time: "+
			"set %s=1 and run this package alone (.ci/run does, after the cluster lane)", FaultsEnv)
	}
	cl := localCluster(t, os.Getenv(storetest.Env))
	t.Cleanup(func() {
		if err := cl.heal(); err != nil {
			t.Error(err)
		}
	})
	return st, cl
}

// localCluster reads the cluster from url, or skips the test when url is
// not a cluster of .ci/cluster.sh on this machine.
func localCluster(t *testing.T, url string) *cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("needs redis-cli to inject faults into the cluster")
	}
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		t.Fatalf("FEED_TEST_REDIS: %v", err)
	}
	c := &cluster{t: t}
	for _, a := range opt.InitAddress {
		h, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatalf("FEED_TEST_REDIS address %q: %v", a, err)
		}
		port, _ := strconv.Atoi(p)
		c.host = h
		c.ports = append(c.ports, port)
	}
	slices.Sort(c.ports)
	if len(c.ports) != 6 || c.host != "127.0.0.1" {
		t.Skipf("needs the 6-node cluster of .ci/cluster.sh on 127.0.0.1 (FEED_TEST_REDIS=$(.ci/cluster.sh url)), got %v", opt.InitAddress)
	}
	dir, err := c.cli(c.ports[0], "config", "get", "dir")
	if err != nil {
		t.Fatalf("node %d: %v", c.ports[0], err)
	}
	lines := strings.Fields(dir)
	if len(lines) != 2 {
		t.Fatalf("node %d: CONFIG GET dir: %q", c.ports[0], dir)
	}
	c.dir = filepath.Dir(lines[1])
	for _, p := range c.ports {
		if _, err := os.Stat(filepath.Join(c.dir, strconv.Itoa(p), "nodes.conf")); err != nil {
			t.Skipf("needs a cluster started by .ci/cluster.sh (to restart killed nodes): %v", err)
		}
	}
	if err := c.script("status"); err != nil {
		t.Fatalf("the cluster is not healthy before the test: %v", err)
	}
	return c
}

// cli runs redis-cli against the node on port.
func (c *cluster) cli(port int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", c.host, "-p", strconv.Itoa(port)}, args...)...).Output()
	s := strings.ReplaceAll(string(out), "\r", "")
	if err == nil && (strings.HasPrefix(s, "ERR") || strings.HasPrefix(s, "Could not connect")) {
		err = fmt.Errorf("%s", strings.TrimSpace(s))
	}
	return s, err
}

// script runs .ci/cluster.sh with args on this cluster's ports and state.
func (c *cluster) script(args ...string) error {
	cmd := exec.Command(filepath.Join(repoRoot(c.t), ".ci", "cluster.sh"), args...)
	cmd.Env = append(os.Environ(), "FEED_CLUSTER_DIR="+c.dir, "FEED_CLUSTER_PORT="+strconv.Itoa(c.ports[0]),
		"FEED_CLUSTER_WAIT=60")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("cluster.sh %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (c *cluster) up(port int) bool {
	out, err := c.cli(port, "ping")
	return err == nil && strings.TrimSpace(out) == "PONG"
}

// nodes is CLUSTER NODES as the node on port sees it.
func (c *cluster) nodes(port int) ([]node, error) {
	out, err := c.cli(port, "cluster", "nodes")
	if err != nil {
		return nil, err
	}
	var ns []node
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		ns = append(ns, node{id: f[0], port: port, flags: strings.Split(f[2], ","), master: f[3], slots: len(f) > 8})
	}
	return ns, nil
}

// masterOfSlot is the port of the master serving slot, as the node on port
// sees it.
func (c *cluster) masterOfSlot(port, slot int) (int, error) {
	out, err := c.cli(port, "cluster", "nodes")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				addr, _, _ := strings.Cut(f[1], "@")
				_, p, _ := net.SplitHostPort(addr)
				return strconv.Atoi(p)
			}
		}
	}
	return 0, fmt.Errorf("no live master serves slot %d", slot)
}

// slotOf is the cluster slot of key.
func (c *cluster) slotOf(key string) (int, error) {
	out, err := c.cli(c.ports[0], "cluster", "keyslot", key)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// kill sends SIGKILL to the redis-server on port (a master) and returns
// the id of its replica, which is to take over.
func (c *cluster) kill(port int) (replica string, err error) {
	ns, err := c.nodes(port)
	if err != nil {
		return "", err
	}
	var self node
	for _, n := range ns {
		if n.has("myself") {
			self = n
		}
	}
	if !self.has("master") {
		return "", fmt.Errorf("node %d is not a master: %v", port, self.flags)
	}
	for _, n := range ns {
		if n.master == self.id && !n.has("fail") {
			replica = n.id
		}
	}
	if replica == "" {
		return "", fmt.Errorf("master %d has no replica", port)
	}
	info, err := c.cli(port, "info", "server")
	if err != nil {
		return "", err
	}
	pid := 0
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			pid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if pid <= 0 {
		return "", fmt.Errorf("node %d: no process_id in INFO server", port)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("kill -9 %d (node %d): %w", pid, port, err)
	}
	return replica, nil
}

// waitPromoted polls until the replica with id has taken over from the
// killed master on port and every live node says cluster_state:ok.
func (c *cluster) waitPromoted(killed int, replica string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := c.promoted(killed, replica)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no failover from node %d within %v: %w", killed, within, err)
		}
		time.Sleep(50 * time.Millisecond) // poll interval, not a synchronisation
	}
}

func (c *cluster) promoted(killed int, replica string) error {
	for _, p := range c.ports {
		if p == killed {
			continue
		}
		ns, err := c.nodes(p)
		if err != nil {
			return err
		}
		for _, n := range ns {
			if n.id == replica && !n.has("master") {
				return fmt.Errorf("node %d sees replica %s as %v", p, replica, n.flags)
			}
			if n.port == killed && !n.has("fail") {
				return fmt.Errorf("node %d sees the killed node as %v", p, n.flags)
			}
		}
		info, err := c.cli(p, "cluster", "info")
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("node %d: cluster_state not ok", p)
		}
	}
	return nil
}

// restart brings the node on port back (cluster.sh restart waits until
// it rejoined and every replica is synced).
func (c *cluster) restart(port int) error { return c.script("restart", strconv.Itoa(port)) }

// heal restarts every node that does not answer and waits for a healthy
// cluster, so later tests find all six nodes up and synced.
func (c *cluster) heal() error {
	for _, p := range c.ports {
		if !c.up(p) {
			if err := c.restart(p); err != nil {
				return err
			}
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := c.script("status")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not healthy 60s after the test: %w", err)
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
}
