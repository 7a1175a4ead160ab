// Package importgen writes synthetic import files for load tests: users,
// then follow edges with a skewed choice of followee (a few accounts are
// followed by many, as in a real graph), then posts, then live sessions.
// It is the one generator behind importer/cmd/importgen and cmd/feedload.
package importgen

import (
	"bufio"
	"fmt"
	"io"
	"math"
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
	// Ignored when FollowsPerUser is set.
	Follows int
	// FollowsPerUser, when set, is the mean number of accounts each user
	// follows, drawn per user from a heavy-tailed (Pareto, alpha 2)
	// distribution: most follow a few, some follow many. Each count is
	// capped at Users-1 and at 2000 (feedd's default follow limit).
	FollowsPerUser int
	// BigV accounts (the most popular of the Zipf ranking) are followed,
	// on top of the above, by every user with probability BigVFollowers,
	// so they have many followers. Their edges are part of the same
	// follow lines and count against the 2000 cap.
	BigV          int
	BigVFollowers float64
	// Posts are written after the follows, by random authors. Without
	// Days: one second apart from 2023-01-01 with every tenth sharing its
	// predecessor's time. With Days: spread evenly, with jitter and
	// occasional ties, over the Days days before End, oldest first, and
	// half of them by the Zipf-popular accounts.
	Posts int
	Days  int
	// End is when the network's history ends (the newest post); with
	// Days, zero means 2023-01-01.
	End time.Time
	// Lives are live sessions written last, by random (Zipf-popular)
	// anchors: a fifth live now (started within the hour before End),
	// three tenths scheduled (preview, within the Days days after End),
	// half replays (ended within the Days days before End). Ids start at
	// LiveIDBase+1.
	Lives int
	// Seed makes the file reproducible.
	Seed uint64
}

// LiveIDBase is added to the index of a live session to make its id.
const LiveIDBase = 900_000_000_000

// PostIDBase is added to the index of a post to make its id.
const PostIDBase = 1_000_000

// Counts is how many lines of each type were written.
type Counts struct{ Users, Follows, Posts, Lives int }

// Write writes the file for s to w.
func Write(w io.Writer, s Spec) (Counts, error) {
	var c Counts
	if s.Users <= 0 {
		return c, fmt.Errorf("importgen: need at least one user")
	}
	per, extra := s.Follows/s.Users, s.Follows%s.Users
	if s.FollowsPerUser > 0 {
		per, extra = 0, 0
	} else if per+1 >= s.Users && (per > 0 || extra > 0) || per+1 > 2000 {
		return c, fmt.Errorf("importgen: %d follows over %d users is %d a user: too many", s.Follows, s.Users, per+1)
	}
	if s.BigV < 0 || s.BigV >= s.Users && s.BigV > 0 || s.BigVFollowers < 0 || s.BigVFollowers > 1 {
		return c, fmt.Errorf("importgen: %d big-V accounts followed with probability %g over %d users", s.BigV, s.BigVFollowers, s.Users)
	}
	const followCap = 2000
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
	// popular picks a followee or author: half uniform, half Zipf over
	// the shuffled ranking.
	popular := func() int {
		if r.IntN(2) == 0 {
			return r.IntN(s.Users) + 1
		}
		return rank[zipf.Uint64()] + 1
	}
	limit := min(s.Users-1, followCap)
	picked := make(map[int]bool, per+1)
	for follower := 1; follower <= s.Users; follower++ {
		n := per
		if follower <= extra {
			n++
		}
		if s.FollowsPerUser > 0 {
			// Pareto with alpha 2 and scale mean/2 has the given mean.
			x := float64(s.FollowsPerUser) / 2 / math.Sqrt(1-r.Float64())
			n = min(int(x+0.5), limit)
		}
		clear(picked)
		if s.BigVFollowers > 0 {
			for b := 0; b < s.BigV; b++ {
				followee := rank[b] + 1
				if followee != follower && len(picked) < limit && r.Float64() < s.BigVFollowers {
					picked[followee] = true
					if err := writeFollow(bw, &line, follower, followee); err != nil {
						return c, err
					}
					c.Follows++
				}
			}
			n = min(n+len(picked), limit)
		}
		for len(picked) < n {
			followee := popular()
			if followee == follower || picked[followee] {
				continue
			}
			picked[followee] = true
			if err := writeFollow(bw, &line, follower, followee); err != nil {
				return c, err
			}
			c.Follows++
		}
	}
	at := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	end := at
	if !s.End.IsZero() {
		end = s.End.UTC()
	}
	span := time.Duration(s.Days) * 24 * time.Hour
	var step time.Duration
	if s.Days > 0 && s.Posts > 0 {
		step = span / time.Duration(s.Posts)
		at = end.Add(-span)
	}
	for i := 1; i <= s.Posts; i++ {
		author := r.IntN(s.Users) + 1
		when := at
		switch {
		case s.Days == 0:
			if i%10 != 0 {
				at = at.Add(time.Second)
			}
			when = at
		default:
			author = popular()
			if i%10 != 0 { // every tenth ties with its predecessor
				at = at.Add(step)
				when = at.Add(-time.Duration(r.Int64N(int64(step/2) + 1)))
			}
		}
		line = append(line[:0], `{"type":"post","id":"`...)
		line = strconv.AppendInt(line, int64(PostIDBase+i), 10)
		line = append(line, `","author":"`...)
		line = strconv.AppendInt(line, int64(author), 10)
		line = append(line, `","text":"post number `...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `","createdAt":"`...)
		line = when.AppendFormat(line, time.RFC3339Nano)
		line = append(line, "\"}\n"...)
		if _, err := bw.Write(line); err != nil {
			return c, err
		}
		c.Posts++
	}
	days := max(s.Days, 1)
	for i := 1; i <= s.Lives; i++ {
		line = append(line[:0], `{"type":"live","id":"`...)
		line = strconv.AppendInt(line, int64(LiveIDBase+i), 10)
		line = append(line, `","anchor":"`...)
		line = strconv.AppendInt(line, int64(popular()), 10)
		line = append(line, `","title":"live number `...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, '"')
		stamp := func(field string, t time.Time) {
			line = append(line, `,"`...)
			line = append(line, field...)
			line = append(line, `":"`...)
			line = t.Truncate(time.Millisecond).AppendFormat(line, time.RFC3339Nano)
			line = append(line, '"')
		}
		within := func(d time.Duration) time.Duration { return time.Duration(r.Int64N(int64(d))) + time.Minute }
		switch k := r.IntN(10); {
		case k < 2: // live now
			started := end.Add(-within(time.Hour))
			stamp("scheduledStartAt", started)
			stamp("startedAt", started)
		case k < 5: // preview
			stamp("scheduledStartAt", end.Add(within(time.Duration(days)*24*time.Hour)))
		default: // replay
			ended := end.Add(-within(time.Duration(days) * 24 * time.Hour))
			started := ended.Add(-within(2 * time.Hour))
			stamp("scheduledStartAt", started)
			stamp("startedAt", started)
			stamp("endedAt", ended)
		}
		line = append(line, "}\n"...)
		if _, err := bw.Write(line); err != nil {
			return c, err
		}
		c.Lives++
	}
	return c, bw.Flush()
}

func writeFollow(bw *bufio.Writer, line *[]byte, follower, followee int) error {
	b := append((*line)[:0], `{"type":"follow","follower":"`...)
	b = strconv.AppendInt(b, int64(follower), 10)
	b = append(b, `","followee":"`...)
	b = strconv.AppendInt(b, int64(followee), 10)
	b = append(b, "\"}\n"...)
	*line = b
	_, err := bw.Write(b)
	return err
}
