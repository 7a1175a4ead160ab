package storetest

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/rueidis"
)

// TestDeletePrefix writes keys under the test's prefix, spread over every
// slot (so over every master of a cluster), and one key outside it, and
// checks Keys lists and DeletePrefix removes exactly the former.
func TestDeletePrefix(t *testing.T) {
	st := New(t)
	ctx := context.Background()
	c := st.Client
	keys := make([]string, 300)
	cmds := make(rueidis.Commands, 0, len(keys)+1)
	for i := range keys {
		keys[i] = st.Prefix + strconv.Itoa(i)
		cmds = append(cmds, c.B().Set().Key(keys[i]).Value("v").Build())
	}
	other := "x" + st.Prefix // shares the prefix's text, not its start
	cmds = append(cmds, c.B().Set().Key(other).Value("v").Build())
	t.Cleanup(func() { c.Do(context.Background(), c.B().Del().Key(other).Build()) })
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Keys(ctx, c, st.Prefix); err != nil || len(got) != len(keys) {
		t.Fatalf("Keys found %d keys (err %v), want %d", len(got), err, len(keys))
	}
	if err := DeletePrefix(ctx, c, st.Prefix); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if n, err := c.Do(ctx, c.B().Exists().Key(k).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("EXISTS %s after DeletePrefix = %d, %v", k, n, err)
		}
	}
	if n, err := c.Do(ctx, c.B().Exists().Key(other).Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("EXISTS %s (outside the prefix) after DeletePrefix = %d, %v", other, n, err)
	}
}
