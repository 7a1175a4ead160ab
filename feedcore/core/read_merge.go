package core

import "github.com/feedd/feedd/feedcore/store"

// ScanOrder says which way a page walks the timeline.
type ScanOrder bool

const (
	Older ScanOrder = false // after a cursor: toward older items
	Newer ScanOrder = true  // before a cursor: toward newer items, closest first
)

// first reports whether a comes before b when walking in order o.
func (o ScanOrder) first(a, b store.Item) bool {
	if o == Newer {
		return b.Before(a)
	}
	return a.Before(b)
}

// SourceRead is what one timeline gave for a seek: its entries in scan
// order, and its frontier: the last entry read when it returned its limit
// and so may hold more beyond, else nil.
type SourceRead struct {
	Items    []store.Item
	Frontier *store.Item
}

// Merge k-way merges lists that are each sorted in scan order o into one,
// dropping duplicates (the same post pushed to an inbox and pulled from an
// outbox). Only the prefix up to the nearest frontier of a full source is
// certain: a full source may hold items beyond its last one that belong
// before later items of other sources. merge returns that certain prefix
// and the frontier (nil when no source is full, so the merge is complete).
func Merge(o ScanOrder, reads []SourceRead) (merged []store.Item, frontier *store.Item) {
	for _, r := range reads {
		if r.Frontier != nil && (frontier == nil || o.first(*r.Frontier, *frontier)) {
			frontier = r.Frontier
		}
	}
	idx := make([]int, len(reads))
	for {
		best := -1
		for i, r := range reads {
			if idx[i] < len(r.Items) && (best < 0 || o.first(r.Items[idx[i]], reads[best].Items[idx[best]])) {
				best = i
			}
		}
		if best < 0 {
			return merged, frontier
		}
		it := reads[best].Items[idx[best]]
		idx[best]++
		if frontier != nil && o.first(*frontier, it) {
			return merged, frontier
		}
		if n := len(merged); n == 0 || merged[n-1] != it {
			merged = append(merged, it)
		}
	}
}
