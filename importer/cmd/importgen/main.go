// Command importgen writes a synthetic JSON Lines import file for feedd:
//
//	go run ./importer/cmd/importgen -users 20000 -follows 1000000 > follows.jsonl
//	feedd import --redis redis://127.0.0.1:6379 follows.jsonl
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/feedd/feedd/importer/importgen"
)

func main() {
	var s importgen.Spec
	flag.IntVar(&s.Users, "users", 20000, "users, ids 1..N")
	flag.IntVar(&s.Follows, "follows", 1000000, "follow edges, spread evenly over followers")
	flag.IntVar(&s.FollowsPerUser, "follows-per-user", 0, "mean accounts each user follows, heavy-tailed per user (replaces -follows)")
	flag.IntVar(&s.BigV, "bigv", 0, "most popular accounts that every user also follows with probability -bigv-followers")
	flag.Float64Var(&s.BigVFollowers, "bigv-followers", 0.5, "probability that a user follows each big-V account")
	flag.IntVar(&s.Posts, "posts", 0, "posts after the follows")
	flag.IntVar(&s.Days, "days", 0, "spread posts over this many days before now (0: one a second from 2023-01-01)")
	flag.IntVar(&s.Lives, "lives", 0, "live sessions: live now, scheduled and replays")
	flag.Uint64Var(&s.Seed, "seed", 1, "random seed")
	out := flag.String("o", "-", "output file; - is standard output")
	flag.Parse()
	if s.Days > 0 {
		s.End = time.Now()
	}
	w := os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "importgen:", err)
			os.Exit(1)
		}
		w = f
	}
	c, err := importgen.Write(w, s)
	if err == nil && w != os.Stdout {
		err = w.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "importgen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "importgen: %d users, %d follows, %d posts, %d live sessions\n", c.Users, c.Follows, c.Posts, c.Lives)
}
