// Package safety decides who sees whom: blocks (either way), mutes (with
// an end or without) and hides of one's own posts from someone, their
// settling into the slots that pages and pushes read, the clean-up of what
// was pushed before a relation, and keyword filters.
//
// Its [Service] embeds the live feed (package live), whose sections obey
// the same rules.
//
// # Invariants
//
//   - Records and derived sets. What a user set is a record in the user's
//     own slot; mirrors and derived sets (hidden authors with when each
//     ends, readers not pushed to, notes of followed authors until their
//     clean-up) are settled from the records through the journal (kind
//     [JRel]) into the slot of the user whose reads or pushes they steer,
//     so a page and a push each read only their own slot.
//   - Ends. Every check compares a relation's end with the service clock,
//     so an ended mute shows the author again at once; the timers that
//     remove ended mutes only tidy.
//   - Clean-up. A newly hidden author's items leave the viewer's inboxes
//     and live snapshots through the clean-up stream; until then, and for
//     Options.CleanupGrace after, reads skip the author by its note, so a
//     fan-out task that read its targets before the relation cannot show
//     it. A note carries its settle's token, so a clean-up straddling an
//     unmute and a mute again leaves the new note alone.
//   - Keyword filters. A viewer's filters are one record with a version
//     token that every change replaces; a page sends the token of the set
//     this process compiled and gets the list back only when it changed,
//     so no copy is ever stale and no round trip is added.
package safety
