package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Post text is filled from templates: a few dozen shapes and word lists
// give thousands of distinct, plausible posts without shipping a corpus.

var everyday = []string{
	"Finally finished %s. Took way longer than I'd like to admit.",
	"Anyone else think %s is overrated? Asking for a friend.",
	"Morning coffee, %s and a quiet inbox. Perfect start.",
	"Hot take: %s beats %s every single time.",
	"Spent the whole weekend on %s. 10/10 would do again.",
	"Just got back from %s. Photos soon!",
	"Can't believe it's already %s.",
	"Reading about %s tonight. Any recommendations?",
	"Note to self: never start %s at 11pm.",
	"Who's up for %s this weekend?",
	"Today's small win: %s.",
	"Unpopular opinion: %s is actually great.",
	"Three things I learned this week: %s, %s and %s.",
	"Remind me why I signed up for %s again?",
	"Thinking about %s more than is healthy.",
}

var things = []string{
	"the sourdough starter", "my tax return", "that 1000-piece puzzle", "a 10k run", "the garden shed",
	"pineapple on pizza", "the new season of that show", "learning Go generics", "a road trip to the coast",
	"cold brew", "the farmers market", "repotting every plant I own", "a board game night", "the book club pick",
	"fixing the bike", "a tiny ramen bar downtown", "spring cleaning", "the museum's late opening",
	"a sunrise hike", "homemade dumplings", "the office move", "my first pottery class", "a rainy Sunday",
}

var times = []string{"Friday", "the end of the month", "December", "the weekend", "Monday again", "half past midnight"}

var topical = map[string][]string{
	"tech": {
		"Today in tech: %s. Thread below 👇",
		"We tried %s so you don't have to. Verdict inside.",
		"Is %s the future or just hype? Vote in the replies.",
		"Weekly roundup: %s, %s and one thing nobody noticed.",
	},
	"food": {
		"Tonight's dinner: %s. Recipe in the comments.",
		"If you only cook one thing this week, make it %s.",
		"Five ingredients, twenty minutes: %s.",
		"Kitchen fail of the day: %s. We move on.",
	},
	"travel": {
		"Greetings from %s! The light here is unreal.",
		"Packing list for %s, thread 🧳",
		"Missed my train in %s and found the best café by accident.",
		"Off the beaten path: %s. Who's been?",
	},
	"sports": {
		"What a finish! %s for the win at the buzzer 🏀",
		"Game day thread: %s. Predictions?",
		"Stat of the night: %s.",
		"Trade rumours: %s. Believe it when I see it.",
	},
	"music": {
		"Now spinning: %s. Turn it up.",
		"New on the playlist: %s 🎧",
		"Live session with %s drops Friday.",
		"If you like %s, you'll love this one.",
	},
	"space": {
		"Clear skies tonight: look for %s just after sunset 🔭",
		"New image: %s. Zoom in, it's worth it.",
		"Launch update: %s.",
		"Fun fact about %s that blew my mind.",
	},
	"games": {
		"Speedrun of %s tonight, come hang out 🎮",
		"Hidden gem of the week: %s.",
		"Patch notes for %s are wild.",
		"Controller or keyboard for %s? Fight.",
	},
	"running": {
		"Easy 8k this morning along %s. Legs feel great.",
		"Training plan week 6: %s. Who's with me?",
		"New personal best on %s today 💪",
		"Rest day. Foam roller and %s.",
	},
}

var topicWords = map[string][]string{
	"tech":    {"on-device AI", "a folding phone", "the new Redis release", "e-ink laptops", "open-source routers", "passkeys", "a 3D printer under $200"},
	"food":    {"miso butter pasta", "crispy chickpeas", "a lazy shakshuka", "lemon ricotta pancakes", "one-pan gnocchi", "chili crisp noodles"},
	"travel":  {"Lisbon", "a tiny island off Croatia", "Kyoto in the rain", "the Scottish Highlands", "Oaxaca", "the Faroe Islands"},
	"sports":  {"the home team", "a rookie point guard", "triple overtime", "a 40-point night", "the league's best defence", "the derby"},
	"music":   {"a lo-fi trio from Leeds", "an unreleased demo", "a synth-pop duo", "a jazz quartet", "the B-side nobody talks about"},
	"space":   {"Jupiter and its moons", "the Orion Nebula", "a returning comet", "the Pleiades", "a new booster landing", "the Moon's terminator"},
	"games":   {"a pixel-art roguelike", "the farming sim everyone loves", "a cosy puzzle game", "the 90s classic remake", "a co-op heist game"},
	"running": {"the river path", "the old rail trail", "a hilly 15k", "the park loop", "tempo intervals", "the harbour front"},
}

var hashtags = []string{"#weekend", "#mood", "#TIL", "#dev", "#foodie", "#travel", "#music", "#running", "#nofilter", "#throwback"}

// postText returns a plausible post for an author with the given topic
// ("" for ordinary users).
func postText(rng *rand.Rand, topic string) string {
	var tmpl string
	var words []string
	if ts, ok := topical[topic]; ok && rng.IntN(4) > 0 {
		tmpl, words = ts[rng.IntN(len(ts))], topicWords[topic]
	} else {
		tmpl, words = everyday[rng.IntN(len(everyday))], things
		if strings.HasPrefix(tmpl, "Can't believe") {
			words = times
		}
	}
	n := strings.Count(tmpl, "%s")
	args := make([]any, n)
	for i := range args {
		args[i] = words[rng.IntN(len(words))]
	}
	s := fmt.Sprintf(tmpl, args...)
	if rng.IntN(5) == 0 {
		s += " " + hashtags[rng.IntN(len(hashtags))]
	}
	return s
}
