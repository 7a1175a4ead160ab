package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/feedd/feedd/feedcore"
)

// creators are the most-followed accounts, by popularity rank; they post
// about their topic.
var creators = []struct{ handle, name, topic string }{
	{"techdigest", "Daily Tech Digest", "tech"},
	{"marcocooks", "Marco Cooks", "food"},
	{"lenatravels", "Lena on the Road", "travel"},
	{"cityhoops", "City Hoops", "sports"},
	{"indiebeats", "Indie Beats Radio", "music"},
	{"novaskies", "Nova Astronomy", "space"},
	{"pixelgarden", "Pixel Garden", "games"},
	{"runwithmia", "Run with Mia", "running"},
}

var firstNames = strings.Fields(`Ann Ben Cara Dev Eli Fay Gus Hana Ivan Jo Kai Lea Milo Nia Omar Pia Quinn Rae Sam Tara
Umar Vera Wes Xia Yara Zed Alba Bo Cyrus Dina Emil Flor Gil Hugo Iris Jun Kofi Luz Mei Nils Olga Pau Rhea Sven Tess
Ugo Val Wren Yuki Zoe Ada Bram Cleo Dario Esme Finn Greta Hal Ines Jonah Kira`)

var lastNames = strings.Fields(`Lee Park Silva Novak Okafor Rossi Meyer Khan Tanaka Costa Berg Dubois Ivanova Moreau Nguyen
Ortiz Patel Quinn Reyes Sato Torres Ueda Vidal Walsh Xu Young Zhang Abe Baker Cruz Diaz Evans Fox Garcia Hall Ito
Jensen Kim Lopez Mori Nakamura Olsen Price Ruiz Shah Turner Vega Wong Yilmaz`)

// person is a generated user with its popularity rank (0 = most followed).
type person struct {
	feedcore.User
	rank  int
	topic string // creators only
}

// makePeople returns n users with ids firstID.. in a shuffled rank order,
// so that popularity does not follow id order.
func makePeople(rng *rand.Rand, n int) []person {
	ranks := rng.Perm(n)
	taken := map[string]bool{}
	out := make([]person, n)
	for i := range out {
		p := person{rank: ranks[i]}
		p.ID = firstID + feedcore.ID(i)
		if p.rank < len(creators) {
			c := creators[p.rank]
			p.Handle, p.DisplayName, p.topic = c.handle, c.name, c.topic
		} else {
			first := firstNames[rng.IntN(len(firstNames))]
			last := lastNames[rng.IntN(len(lastNames))]
			p.DisplayName = first + " " + last
			p.Handle = handleFor(rng, first, last, taken)
		}
		taken[p.Handle] = true
		// Most people have an avatar; the rest show that avatarUrl is
		// nullable. Load makes the file name a URL (mediaBase).
		if rng.IntN(10) < 7 {
			p.AvatarURL = avatarFile(p.ID)
		}
		out[i] = p
	}
	return out
}

func handleFor(rng *rand.Rand, first, last string, taken map[string]bool) string {
	base := strings.ToLower(first)
	switch rng.IntN(3) {
	case 0:
		base += "_" + strings.ToLower(last)
	case 1:
		base += strings.ToLower(last[:1])
	default:
		base += fmt.Sprint(rng.IntN(99) + 1)
	}
	h := base
	for i := 2; taken[h]; i++ {
		h = fmt.Sprintf("%s%d", base, i)
	}
	return h
}

// avatars is how many avatars the demo's people share, drawn by
// internal/mediagen and served by MediaHandler.
const avatars = 16

// avatarFile is the avatar of the person with id: a file of MediaHandler.
func avatarFile(id feedcore.ID) string { return fmt.Sprintf("avatar-%02d.png", id%avatars) }
