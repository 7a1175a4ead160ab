package store

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore/storetest"
)

// Each read's parser gets exactly its own replies, in the order added,
// however many commands each read has (none included); a reply count that
// does not match the commands is an error, not a misread.
func TestBatchHandsEachReadItsReplies(t *testing.T) {
	st := storetest.New(t)
	ctx, c := context.Background(), st.Client
	for i, v := range []string{"1", "2", "3"} {
		if err := c.Do(ctx, c.B().Set().Key(st.Prefix+Itoa(i)).Value(v).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	get := func(i int) rueidis.Completed { return c.B().Get().Key(st.Prefix + Itoa(i)).Build() }
	var got [][]string
	read := func(rs []rueidis.RedisResult) error {
		vs := []string{}
		for _, r := range rs {
			v, err := r.ToString()
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		got = append(got, vs)
		return nil
	}
	var b Batch
	b.Add([]rueidis.Completed{get(0), get(1)}, read)
	b.Add(nil, read)
	b.Add([]rueidis.Completed{get(2)}, read)
	if n := len(b.Cmds()); n != 3 {
		t.Fatalf("%d commands, want 3", n)
	}
	rs := c.DoMulti(ctx, b.Cmds()...)
	if err := b.Parse(rs); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1", "2"}, {}, {"3"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("reads got %v, want %v", got, want)
	}
	if err := b.Parse(rs[:2]); err == nil {
		t.Error("two replies for three commands parsed without an error")
	}
}
