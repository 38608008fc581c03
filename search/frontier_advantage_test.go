package search_test

import (
	"math"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// The Tree-GRPO and SPO advantages of the worked example, computed by
// hand (rewards A=1, B=0, C=1 in tree 0, D=1, E=0 in tree 1).
func TestFrontierAdvantagesHandComputed(t *testing.T) {
	const eps = 1e-6
	inter := func(r float64) float64 { return (r - 0.6) / (math.Sqrt(0.3) + eps) }
	// tree 0: mean 2/3, sample std √(1/3); tree 1: mean 1/2, std √(1/2).
	t0 := func(r float64) float64 { return (r - 2.0/3) / (math.Sqrt(1.0/3) + eps) }
	t1 := func(r float64) float64 { return (r - 0.5) / (math.Sqrt(0.5) + eps) }
	// SPO: V(end) − V(start) of every segment.
	a1, a2 := 2.0/3-0.6, 1-2.0/3 // A[0:2], A[2:6]
	b1, b2 := 0.5-2.0/3, 0-0.5   // B[0:2] (B and C), B[2:4]
	c1 := 1 - 0.5
	d1, d2, e1 := 0.5-0.6, 1-0.5, 0-0.5
	cases := []struct {
		name string
		want [][]float64
	}{
		{"tree_grpo", [][]float64{
			rep(t0(1)+inter(1), 6), rep(t0(0)+inter(0), 6), rep(t0(1)+inter(1), 7),
			rep(t1(1)+inter(1), 3), rep(t1(0)+inter(0), 3),
		}},
		{"spo", [][]float64{
			cat(rep(a1, 2), rep(a2, 4)),
			cat(rep(a1, 2), rep(b1, 2), rep(b2, 2)),
			cat(rep(a1, 2), rep(b1, 2), rep(c1, 3)),
			cat(rep(d1, 1), rep(d2, 2)),
			cat(rep(d1, 1), rep(e1, 2)),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, est := checkWorkedAdvantages(t, tc.name, tc.want)
			if n := est.(search.ThinBaselines).ThinBaselines(g); n != 0 {
				t.Errorf("%d thin baselines in trees of 3 and 2 leaves", n)
			}
		})
	}
}

// A tree of one leaf has no intra-tree baseline: its intra-tree term is 0
// and it is counted; on a flat group SPO is r − mean r.
func TestFrontierAdvantagesSmallGroups(t *testing.T) {
	a := &search.Node{Tokens: []int{1, 2, 3}}
	b := &search.Node{Parent: a, ForkAt: 1, Tokens: []int{4, 5}}
	c := &search.Node{Tokens: []int{6, 7}}
	g := search.NewGroup([]int{0}, "tree_grpo", []*search.Node{a, b, c})
	for i, r := range []float64{1, 0, 1} {
		g.Leaves()[i].SetOutcome(r, "")
	}
	adv, err := search.TreeGRPO{Epsilon: 0}.Advantages(g)
	if err != nil {
		t.Fatal(err)
	}
	// all: mean 2/3, std √(1/3); tree 0: mean 1/2, std √(1/2); tree 1: none.
	sAll, s0 := math.Sqrt(1.0/3), math.Sqrt(0.5)
	want := []float64{(1-2.0/3)/sAll + 0.5/s0, (0-2.0/3)/sAll - 0.5/s0, (1 - 2.0/3) / sAll}
	for i, w := range want {
		if math.Abs(adv[i][0]-w) > 1e-12 {
			t.Errorf("leaf %d: %v, want %v", i, adv[i][0], w)
		}
	}
	if n := (search.TreeGRPO{}).ThinBaselines(g); n != 1 {
		t.Errorf("thin baselines %d, want 1 (tree 1)", n)
	}

	flat := search.NewGroup([]int{0}, "flat", []*search.Node{{Tokens: []int{1}}, {Tokens: []int{2, 3}}, {Tokens: []int{4}}, {Tokens: []int{5}}})
	for i, r := range []float64{1, 0, 0, 1} {
		flat.Leaves()[i].SetOutcome(r, "")
	}
	spo, _ := search.SPO{}.Advantages(flat)
	dr, _ := search.DrGRPO{}.Advantages(flat)
	for i := range spo {
		for j := range spo[i] {
			if spo[i][j] != dr[i][j] {
				t.Errorf("flat leaf %d: spo %v, dr_grpo %v", i, spo[i], dr[i])
			}
		}
	}
	one := search.NewGroup([]int{0}, "flat", []*search.Node{{Tokens: []int{1}}})
	one.Leaves()[0].SetOutcome(1, "")
	tg := search.TreeGRPO{Epsilon: search.DefaultEpsilon}
	if a, _ := tg.Advantages(one); a[0][0] != 1 || tg.ThinBaselines(one) != 2 || (search.SPO{}).ThinBaselines(one) != 1 {
		t.Errorf("one leaf: tree_grpo %v with %d thin baselines, spo %d", a, tg.ThinBaselines(one), (search.SPO{}).ThinBaselines(one))
	}
}
