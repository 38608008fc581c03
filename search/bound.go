package search

import "fmt"

// MaxGroupTokens returns the most tokens one group of st can generate with
// responses of at most maxTokens tokens and a per-prompt budget of budget
// (0: none): the sum of the longest possible lengths of every response and
// branch the strategy may start, capped by the budget. A caller that starts
// a group only when what it has left covers this bound never exceeds its
// limit and never truncates a group. Strategies other than Flat,
// EntropyTree and SegmentTree are an error.
//
// The bounds: a flat group has N responses; an entropy tree M roots and at
// most M·L·N·T branches, each forked after its parent's first token (so at
// most maxTokens−1 long); a segment tree at most W nodes (a node holds a
// share of the width W), every branch forked at response index S or later.
func MaxGroupTokens(st Strategy, maxTokens int, budget int64) (int64, error) {
	if maxTokens < 1 {
		return 0, fmt.Errorf("max group tokens: max_tokens = %d, want >= 1", maxTokens)
	}
	mt := int64(maxTokens)
	switch s := st.(type) {
	case *Flat:
		st = *s
	case *EntropyTree:
		st = *s
	case *SegmentTree:
		st = *s
	}
	var n int64
	switch s := st.(type) {
	case Flat:
		n = int64(s.N) * mt
	case EntropyTree:
		n = int64(s.M)*mt + int64(s.M)*int64(s.L)*int64(s.N)*int64(s.T)*(mt-1)
	case SegmentTree:
		n = mt + int64(s.W-1)*max(0, mt-int64(s.S))
	default:
		return 0, fmt.Errorf("max group tokens: strategy %q has no known bound", st.Name())
	}
	if budget > 0 && budget < n {
		n = budget
	}
	return n, nil
}
