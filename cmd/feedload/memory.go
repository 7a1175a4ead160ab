package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/internal/redisinfo"
	"github.com/feedd/feedd/redisstore"
)

// maxMeasured bounds the MEMORY USAGE calls: past it, every Stride-th key.
const maxMeasured = 200_000

// measureMemory scans the keys under prefix (on a cluster, every master's)
// and sums their MEMORY USAGE. Errors (a server without MEMORY USAGE) are
// reported in the result, not returned: the figures are extras.
func measureMemory(ctx context.Context, c rueidis.Client, prefix string) *loadreport.MemoryReport {
	m := &loadreport.MemoryReport{Stride: 1}
	fail := func(err error) *loadreport.MemoryReport { m.Error = err.Error(); return m }
	masters, err := redisstore.Masters(ctx, c)
	if err != nil {
		return fail(err)
	}
	var dbsize int64
	for _, n := range masters {
		info, err := n.Do(ctx, n.B().Info().Section("memory").Build()).ToString()
		if err != nil {
			return fail(err)
		}
		used, _ := strconv.ParseInt(redisinfo.Fields(info)["used_memory"], 10, 64)
		m.UsedMemory += used
		if k, err := n.Do(ctx, n.B().Dbsize().Build()).AsInt64(); err == nil {
			dbsize += k
		}
	}
	if dbsize > maxMeasured {
		m.Stride = dbsize/maxMeasured + 1
	}
	var seen int64
	err = redisstore.ScanPrefix(ctx, c, prefix, func(batch []string) error {
		var keys []string
		var cmds rueidis.Commands
		for _, k := range batch {
			rest := strings.TrimPrefix(k, prefix)
			m.Keys++
			switch {
			case strings.HasPrefix(rest, "u:{"):
				m.Users++
			case strings.HasPrefix(rest, "i:{"):
				m.Inboxes++
			}
			seen++
			if seen%m.Stride != 0 {
				continue
			}
			keys = append(keys, rest)
			cmds = append(cmds, c.B().MemoryUsage().Key(k).Build())
			if strings.HasPrefix(rest, "i:{") {
				cmds = append(cmds, c.B().Zcard().Key(k).Build())
			}
		}
		rs := c.DoMulti(ctx, cmds...)
		i := 0
		for _, k := range keys {
			n, err := rs[i].AsInt64()
			if err != nil && !rueidis.IsRedisNil(err) {
				return err
			}
			i++
			m.KeyBytes += n * m.Stride
			if strings.HasPrefix(k, "i:{") {
				z, _ := rs[i].AsInt64()
				i++
				m.InboxBytes += n * m.Stride
				m.InboxEntries += z * m.Stride
			}
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if m.Users > 0 {
		m.BytesPerUser = float64(m.KeyBytes) / float64(m.Users)
	}
	if m.InboxEntries > 0 {
		m.BytesPerInboxEntry = float64(m.InboxBytes) / float64(m.InboxEntries)
	}
	return m
}
