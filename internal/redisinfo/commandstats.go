package redisinfo

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// Command is one command's statistics from INFO commandstats: calls, the
// microseconds Redis spent running them, and (Redis 6.2 and later) the
// calls it rejected before running them and those that failed.
type Command struct {
	Calls, Usec, Rejected, Failed int64
}

// Commands are statistics by command name, lower case as Redis gives it;
// subcommands are named with a bar ("client|setinfo").
type Commands map[string]Command

// ParseCommandStats reads an INFO commandstats answer: lines such as
// "cmdstat_evalsha:calls=12,usec=1344,usec_per_call=112.00,rejected_calls=0,failed_calls=0".
// Other fields are ignored; a cmdstat line without calls or usec is an
// error.
func ParseCommandStats(info string) (Commands, error) {
	out := Commands{}
	for k, v := range Fields(info) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var c Command
		var seen int
		for _, kv := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(kv, "=")
			var dst *int64
			switch key {
			case "calls":
				dst = &c.Calls
				seen++
			case "usec":
				dst = &c.Usec
				seen++
			case "rejected_calls":
				dst = &c.Rejected
			case "failed_calls":
				dst = &c.Failed
			default:
				continue
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("commandstats %s: %s: %w", name, key, err)
			}
			*dst = n
		}
		if seen != 2 {
			return nil, fmt.Errorf("commandstats %s: %q has no calls and usec", name, v)
		}
		out[name] = c
	}
	return out, nil
}

// Sub is what ran between before and c: the commands whose calls grew,
// with the growth of each figure. A command missing from before (first run
// since the server started, or since CONFIG RESETSTAT) counts from zero.
func (c Commands) Sub(before Commands) Commands {
	out := Commands{}
	for name, now := range c {
		was := before[name]
		if now.Calls > was.Calls {
			out[name] = Command{Calls: now.Calls - was.Calls, Usec: now.Usec - was.Usec,
				Rejected: now.Rejected - was.Rejected, Failed: now.Failed - was.Failed}
		}
	}
	return out
}

// Add adds o's figures to c's, command by command.
func (c Commands) Add(o Commands) {
	for name, s := range o {
		t := c[name]
		c[name] = Command{Calls: t.Calls + s.Calls, Usec: t.Usec + s.Usec,
			Rejected: t.Rejected + s.Rejected, Failed: t.Failed + s.Failed}
	}
}

// ReadCommands is INFO commandstats of every master of c, summed by command.
func ReadCommands(ctx context.Context, c rueidis.Client) (Commands, Masters, error) {
	sum := Commands{}
	n, err := each(ctx, c, "commandstats", func(info string) error {
		one, err := ParseCommandStats(info)
		sum.Add(one)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return sum, n, nil
}
