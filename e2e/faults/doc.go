// Package faults holds feedd's fault-injection tests: acknowledged posts
// survive Redis master failovers, worker processes killed mid fan-out and
// rolling restarts of serve replicas and workers, each delivered exactly
// once, failed publishes leave no ghost, a rolling restart fails no
// request, and a subscriber keeps being told of new posts through the
// failover of the master its notices travel on.
//
// Lanes: every test here needs a real Redis (FEED_TEST_REDIS) and skips on
// the embedded store. TestMasterFailover and TestRealtimeFailover need the
// Redis Cluster lane, a cluster started by .ci/cluster.sh (they kill
// masters with SIGKILL and bring them back with `.ci/cluster.sh restart
// PORT`), and skip on a single Redis; since they disturb every test using
// the cluster meanwhile, they also need FEED_TEST_FAULTS=1 and are run
// alone:
//
//	FEED_TEST_REDIS=$(.ci/cluster.sh url) FEED_TEST_FAULTS=1 go test -race -run Failover -v ./e2e/faults
//
// TestWorkerKilledMidFanout and TestRollingRestartDropsNothing run on both
// real lanes. The tests
// find the repository root (for .ci/cluster.sh and ./cmd/feedd) from their
// own source file's location.
package faults
