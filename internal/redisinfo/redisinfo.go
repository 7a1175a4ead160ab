// Package redisinfo reads what Redis says about itself in INFO: the CPU
// time the server has used and its per-command statistics, summed over the
// masters of a cluster. The load tool and the benchmarks take them before
// and after a run to give what an operation costs Redis.
package redisinfo

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
)

// Fields parses an INFO answer (one section or several) into its fields:
// "name:value" lines; section headers ("# CPU") and blank lines are skipped.
func Fields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// Masters is how many nodes a reading was summed over.
type Masters int

// each runs INFO section on every master of c (the one node of a single
// Redis) and hands each answer to parse.
func each(ctx context.Context, c rueidis.Client, section string, parse func(info string) error) (Masters, error) {
	nodes, err := redisstore.Masters(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("INFO %s: %w", section, err)
	}
	for addr, n := range nodes {
		info, err := n.Do(ctx, n.B().Info().Section(section).Build()).ToString()
		if err == nil {
			err = parse(info)
		}
		if err != nil {
			return 0, fmt.Errorf("INFO %s on %s: %w", section, addr, err)
		}
	}
	return Masters(len(nodes)), nil
}
