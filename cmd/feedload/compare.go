package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
)

// phaseOrder is the order of n phases of two servers, 0 for A and 1 for
// B: A B B A, repeated, so that neither always goes first and a drift over
// the run (caches warming, a busy neighbour on the machine) falls on both
// alike.
func phaseOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		if m := i % 4; m == 1 || m == 2 {
			out[i] = 1
		}
	}
	return out
}

// runCompare drives servers A and B (cfgs) in alternation, phases phases
// in all (even), each server for its Duration over its half of them, with
// the same workload and concurrency; it fills their reports and returns
// the comparison of the two (without Figures: the caller adds memory first).
func runCompare(ctx context.Context, cfgs [2]loadConfig, reps [2]*loadreport.Report, phases int) (*loadreport.Comparison, error) {
	names := [2]string{"A", "B"}
	var ts [2]*target
	for i := range ts {
		var err error
		if ts[i], err = newTarget(ctx, names[i], cfgs[i]); err != nil {
			return nil, err
		}
	}
	for i, t := range ts {
		var err error
		if reps[i].Warm, err = t.warm(ctx); err != nil {
			return nil, err
		}
	}
	each := phases / 2
	d := cfgs[0].Duration / time.Duration(each)
	lagSamples := (cfgs[0].LagSamples + each - 1) / each
	order := phaseOrder(phases)
	for k, i := range order {
		backlog := cfgs[i].Backlog
		if backlog != nil && !slices.Contains(order[:k], i) {
			reps[i].BacklogStart, _ = backlog(ctx)
		}
		if err := ts[i].phase(ctx, d, lagSamples, fmt.Sprintf("load %s (phase %d of %d)", names[i], k+1, phases)); err != nil {
			return nil, err
		}
		if backlog != nil && !slices.Contains(order[k+1:], i) {
			reps[i].BacklogEnd, _ = backlog(ctx)
		}
	}
	c := &loadreport.Comparison{PhaseSeconds: d.Seconds(), A: reps[0], B: reps[1]}
	for _, i := range order {
		c.Phases = append(c.Phases, names[i])
	}
	for i, t := range ts {
		t.report(reps[i])
	}
	return c, nil
}
