// Package importgen writes synthetic import files for load tests: users,
// then follow edges with a skewed choice of followee (a few accounts are
// followed by many, as in a real graph), then posts.
package importgen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Spec says what to write.
type Spec struct {
	// Users are ids 1..Users, handles u1..uN.
	Users int
	// Follows is the number of distinct follow edges, spread evenly over
	// followers: each follows Follows/Users accounts (some one more), which
	// must stay below Users and within feedd's follow limit (2000).
	Follows int
	// Posts are written after the follows, by random authors, one second
	// apart from 2023-01-01 with every tenth sharing its predecessor's time.
	Posts int
	// Seed makes the file reproducible.
	Seed uint64
}

// Counts is how many lines of each type were written.
type Counts struct{ Users, Follows, Posts int }

// Write writes the file for s to w.
func Write(w io.Writer, s Spec) (Counts, error) {
	var c Counts
	if s.Users <= 0 {
		return c, fmt.Errorf("importgen: need at least one user")
	}
	per, extra := s.Follows/s.Users, s.Follows%s.Users
	if per+1 >= s.Users && (per > 0 || extra > 0) || per+1 > 2000 {
		return c, fmt.Errorf("importgen: %d follows over %d users is %d a user: too many", s.Follows, s.Users, per+1)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for id := 1; id <= s.Users; id++ {
		line = append(line[:0], `{"type":"user","id":"`...)
		line = strconv.AppendInt(line, int64(id), 10)
		line = append(line, `","handle":"u`...)
		line = strconv.AppendInt(line, int64(id), 10)
		line = append(line, `","displayName":"User `...)
		line = strconv.AppendInt(line, int64(id), 10)
		line = append(line, "\"}\n"...)
		if _, err := bw.Write(line); err != nil {
			return c, err
		}
		c.Users++
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	// Half the picks are uniform, half Zipf-distributed over a shuffled
	// ranking, so popularity does not follow id order.
	zipf := rand.NewZipf(r, 1.2, 1, uint64(s.Users-1))
	rank := r.Perm(s.Users)
	picked := make(map[int]bool, per+1)
	for follower := 1; follower <= s.Users; follower++ {
		n := per
		if follower <= extra {
			n++
		}
		clear(picked)
		for len(picked) < n {
			var followee int
			if r.IntN(2) == 0 {
				followee = r.IntN(s.Users) + 1
			} else {
				followee = rank[zipf.Uint64()] + 1
			}
			if followee == follower || picked[followee] {
				continue
			}
			picked[followee] = true
			line = append(line[:0], `{"type":"follow","follower":"`...)
			line = strconv.AppendInt(line, int64(follower), 10)
			line = append(line, `","followee":"`...)
			line = strconv.AppendInt(line, int64(followee), 10)
			line = append(line, "\"}\n"...)
			if _, err := bw.Write(line); err != nil {
				return c, err
			}
			c.Follows++
		}
	}
	at := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= s.Posts; i++ {
		if i%10 != 0 {
			at = at.Add(time.Second)
		}
		line = append(line[:0], `{"type":"post","id":"`...)
		line = strconv.AppendInt(line, int64(1_000_000+i), 10)
		line = append(line, `","author":"`...)
		line = strconv.AppendInt(line, int64(r.IntN(s.Users)+1), 10)
		line = append(line, `","text":"post number `...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `","createdAt":"`...)
		line = at.AppendFormat(line, time.RFC3339)
		line = append(line, "\"}\n"...)
		if _, err := bw.Write(line); err != nil {
			return c, err
		}
		c.Posts++
	}
	return c, bw.Flush()
}
