package search

import "fmt"

// MaxGroupTokens returns the most tokens one group of st can generate with
// responses of at most maxTokens tokens and a per-prompt budget of budget
// (0: none): st.MaxGroupTokens(maxTokens), the sum of the longest possible
// lengths of every response and branch the strategy may start, capped by
// the budget. A caller that starts a group only when what it has left
// covers this bound never exceeds its limit and never truncates a group.
func MaxGroupTokens(st Strategy, maxTokens int, budget int64) (int64, error) {
	if maxTokens < 1 {
		return 0, fmt.Errorf("max group tokens: max_tokens = %d, want >= 1", maxTokens)
	}
	n := st.MaxGroupTokens(maxTokens)
	if budget > 0 && budget < n {
		n = budget
	}
	return n, nil
}
