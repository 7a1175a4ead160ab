package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestSharedCommandRefusals: the commands that work on a shared Redis
// refuse a wrong argument count, then a missing --redis, each naming what
// was wrong, before they open anything.
func TestSharedCommandRefusals(t *testing.T) {
	t.Setenv("FEED_REDIS_URL", "")
	o := cmdOptions{stdout: io.Discard, flagSetMade: func(fs *flag.FlagSet) { fs.SetOutput(io.Discard) }}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "import takes one file"},
		{[]string{"export", "a", "b"}, "export takes one file"},
		{[]string{"rebuild", "x"}, `rebuild takes no arguments, got ["x"]`},
		{[]string{"worker", "x"}, `worker takes no arguments, got ["x"]`},
		{[]string{"import", "f.jsonl"}, "import needs --redis"},
		{[]string{"export", "-"}, "export needs --redis"},
		{[]string{"rebuild"}, "rebuild needs --redis"},
		{[]string{"worker"}, "worker needs --redis"},
		{[]string{"worker", "--log-format", "xml"}, "--log-format"},
	} {
		err := run(context.Background(), c.args, o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}
