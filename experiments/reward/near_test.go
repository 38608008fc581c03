package reward

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Near misses differ from a right candidate in one character of the same
// kind, are graded wrong, are new to their group and come after the
// group's own candidates; groups without a right candidate are copied as
// they are, and the input is not changed.
func TestNearMisses(t *testing.T) {
	tk := smallTask(t)
	p, err := tk.Prompt(0, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	q, err := tk.Prompt(0, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	groups := []Group{
		{Prompt: p.Text, Responses: []string{p.Demo, "x"}, Labels: []bool{true, false}},
		{Prompt: q.Text, Responses: []string{"y", "z"}, Labels: []bool{false, false}},
	}
	before := slices.Clone(groups[0].Responses)
	out, added, err := NearMisses(tk, groups, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(groups[0].Responses, before) {
		t.Errorf("input group changed: %q", groups[0].Responses)
	}
	g := out[0]
	if added < 1 || len(g.Responses) != 2+added || !slices.Equal(g.Responses[:2], before) {
		t.Fatalf("added %d, group %q", added, g.Responses)
	}
	if !slices.Equal(out[1].Responses, groups[1].Responses) {
		t.Errorf("group without a right candidate: %q, want it as it was", out[1].Responses)
	}
	seen := map[string]bool{}
	for i, r := range g.Responses[2:] {
		if g.Labels[2+i] || seen[r] || slices.Contains(before, r) {
			t.Errorf("near miss %q: label %v, repeated %v", r, g.Labels[2+i], seen[r] || slices.Contains(before, r))
		}
		seen[r] = true
		if v := tk.Verify(p, r); v.Reward == 1 {
			t.Errorf("near miss %q of %q is right", r, p.Demo)
		}
		diff := 0
		for j := range len(r) {
			if r[j] != p.Demo[j] {
				diff++
				if classOf(r[j]) != classOf(p.Demo[j]) || classOf(r[j]) == "" {
					t.Errorf("near miss %q changes %q to %q", r, p.Demo[j], r[j])
				}
			}
		}
		if len(r) != len(p.Demo) || diff != 1 {
			t.Errorf("near miss %q of %q: %d characters changed, want 1", r, p.Demo, diff)
		}
	}
	again, _, _ := NearMisses(tk, groups, 5, 1)
	if !slices.Equal(again[0].Responses, g.Responses) {
		t.Errorf("same seed, other near misses: %q, %q", again[0].Responses, g.Responses)
	}
	none, n, _ := NearMisses(tk, groups, 0, 1)
	if n != 0 || !slices.Equal(none[0].Responses, before) {
		t.Errorf("k = 0 added %d", n)
	}
	if _, _, err := NearMisses(tk, groups, -1, 1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("k = -1: error %v", err)
	}
	if _, _, err := NearMisses(tk, []Group{{Prompt: "no prompt", Responses: []string{"1"}, Labels: []bool{true}}}, 1, 1); err == nil || !strings.Contains(err.Error(), "group 0") {
		t.Errorf("unreadable prompt: error %v", err)
	}
}

func TestNearMissChangesOneCharacterOfItsKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[byte]int{}
	for range 900 {
		m, ok := nearMiss("+5=", rng)
		if !ok || len(m) != 3 || m[0] != '+' || m[2] != '=' || m[1] == '5' || classOf(m[1]) != "0123456789" {
			t.Fatalf("nearMiss(%q) = %q, %v", "+5=", m, ok)
		}
		counts[m[1]]++
	}
	if len(counts) != 9 {
		t.Errorf("digits drawn %v, want all 9 others", counts)
	}
	if m, ok := nearMiss("+=", rng); ok {
		t.Errorf("nearMiss without a digit or letter = %q, true", m)
	}
}
