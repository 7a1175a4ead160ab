// Command importgen writes a synthetic JSON Lines import file for feedd:
//
//	go run ./importer/cmd/importgen -users 20000 -follows 1000000 > follows.jsonl
//	feedd import --redis redis://127.0.0.1:6379 follows.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/feedd/feedd/importer/importgen"
)

func main() {
	var s importgen.Spec
	flag.IntVar(&s.Users, "users", 20000, "users, ids 1..N")
	flag.IntVar(&s.Follows, "follows", 1000000, "follow edges, spread evenly over followers")
	flag.IntVar(&s.Posts, "posts", 0, "posts after the follows")
	flag.Uint64Var(&s.Seed, "seed", 1, "random seed")
	out := flag.String("o", "-", "output file; - is standard output")
	flag.Parse()
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
	fmt.Fprintf(os.Stderr, "importgen: %d users, %d follows, %d posts\n", c.Users, c.Follows, c.Posts)
}
