package reward

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rollout-rl/rollout/experiments/task"
)

// This file makes hard negatives for the ranking loss: near misses, a
// right candidate with one character changed to another of its kind (a
// digit to another digit, a letter to another letter), which the
// verifier then grades. They sit next to the right answer — the same
// prompt, format and all characters but one — where a reward model that
// only recognises the shape of an answer, not whether it is right, orders
// them by chance.

// NearMisses returns a copy of groups in which every right candidate of a
// group with a right one is followed, at the end of its group, by up to k
// near misses that the verifier grades wrong (a change that the verifier
// still grades right, or that repeats a candidate the group already has,
// is dropped), and the number added. A group without a right candidate is
// copied as it is. The changes are drawn from a stream of (seed, group
// index), so a group's near misses do not depend on the other groups.
func NearMisses(t task.Task, groups []Group, k int, seed uint64) ([]Group, int, error) {
	if k < 0 {
		return nil, 0, fmt.Errorf("near misses: %d a right candidate, want ≥ 0", k)
	}
	out := make([]Group, len(groups))
	added := 0
	for gi, g := range groups {
		out[gi] = Group{Prompt: g.Prompt, Responses: slices.Clone(g.Responses), Labels: slices.Clone(g.Labels)}
		if k == 0 || !slices.Contains(g.Labels, true) {
			continue
		}
		p, err := t.ParsePrompt(g.Prompt)
		if err != nil {
			return nil, 0, fmt.Errorf("near misses: group %d: %w", gi, err)
		}
		seen := map[string]bool{}
		for _, r := range g.Responses {
			seen[r] = true
		}
		rng := rand.New(rand.NewPCG(seed, uint64(gi)))
		for i, r := range g.Responses {
			if !g.Labels[i] {
				continue
			}
			for range k {
				miss, ok := nearMiss(r, rng)
				if !ok || seen[miss] {
					continue
				}
				seen[miss] = true
				if t.Verify(p, miss).Reward == 1 {
					continue
				}
				out[gi].Responses = append(out[gi].Responses, miss)
				out[gi].Labels = append(out[gi].Labels, false)
				added++
			}
		}
	}
	return out, added, nil
}

// charClasses are the kinds of character a near miss changes within.
var charClasses = []string{"0123456789", "abcdefghijklmnopqrstuvwxyz"}

// nearMiss changes one character of r, chosen uniformly among those of a
// class in charClasses, to another of its class; false if r has none.
func nearMiss(r string, rng *rand.Rand) (string, bool) {
	var at []int
	for i := range len(r) {
		if classOf(r[i]) != "" {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return "", false
	}
	i := at[rng.IntN(len(at))]
	class := classOf(r[i])
	j := rng.IntN(len(class) - 1)
	if class[j] == r[i] { // skip the character itself
		j = len(class) - 1
	}
	return r[:i] + class[j:j+1] + r[i+1:], true
}

// classOf is the class in charClasses that holds c, "" if none does.
func classOf(c byte) string {
	for _, cl := range charClasses {
		if strings.IndexByte(cl, c) >= 0 {
			return cl
		}
	}
	return ""
}
