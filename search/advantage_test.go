package search_test

import (
	"math"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// workedExample builds the worked example of the tree advantage as two trees over 5 leaves,
// rewards A=1, B=0, C=1, D=1, E=0 (V(root) = 3/5):
//
//	tree 0: A (6 tokens); B forks A at 2 (4 tokens); C forks B at 2 (3 tokens)
//	tree 1: D (3 tokens); E forks D at 1 (2 tokens)
//
// For C's own segment s: V(s) = 1, V(parent) = V(B[0:2]) = 1/2, so
// L = 1/2 and G = 2/5.
func workedExample() *search.Group {
	toks := func(n int, first int) []int {
		t := make([]int, n)
		for i := range t {
			t[i] = first + i
		}
		return t
	}
	a := &search.Node{Tokens: toks(6, 0)}
	b := &search.Node{Parent: a, ForkAt: 2, Tokens: toks(4, 10)}
	c := &search.Node{Parent: b, ForkAt: 2, Tokens: toks(3, 20)}
	d := &search.Node{Tokens: toks(3, 30)}
	e := &search.Node{Parent: d, ForkAt: 1, Tokens: toks(2, 40)}
	g := search.NewGroup([]int{1, 2}, "entropy_tree", []*search.Node{a, b, c, d, e})
	for i, r := range []float64{1, 0, 1, 1, 0} {
		g.Leaves()[i].SetOutcome(r, map[bool]string{true: "correct", false: "wrong"}[r == 1])
	}
	return g
}

func rep(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestAdvantagesHandComputed(t *testing.T) {
	s2, s3 := math.Sqrt(2), math.Sqrt(3)
	// TreeRL segment values (G + L) / √|leaves|:
	a1 := (2.0 / 15) / s3 // A[0:2]: V 2/3, parent root 3/5
	a2 := 11.0 / 15       // A[2:6]: V 1, parent 2/3
	b1 := (-4.0 / 15) / s2
	b2 := -1.1 // B[2:4]: V 0, parent 1/2
	c1 := 0.9  // the worked example: G 2/5 + L 1/2
	d1 := -0.2 / s2
	d2 := 0.9
	e1 := -1.1
	sd := math.Sqrt(0.3) // sample std of {1,0,1,1,0}
	gr := func(r float64) float64 { return (r - 0.6) / (sd + 1e-6) }
	cases := []struct {
		name string
		want [][]float64 // per leaf A..E, per response token
	}{
		{"tree", [][]float64{
			cat(rep(a1, 2), rep(a2, 4)),
			cat(rep(a1, 2), rep(b1, 2), rep(b2, 2)),
			cat(rep(a1, 2), rep(b1, 2), rep(c1, 3)),
			cat(rep(d1, 1), rep(d2, 2)),
			cat(rep(d1, 1), rep(e1, 2)),
		}},
		{"tree_nosqrt", [][]float64{
			cat(rep(a1*s3, 2), rep(a2, 4)),
			cat(rep(a1*s3, 2), rep(b1*s2, 2), rep(b2, 2)),
			cat(rep(a1*s3, 2), rep(b1*s2, 2), rep(c1, 3)),
			cat(rep(d1*s2, 1), rep(d2, 2)),
			cat(rep(d1*s2, 1), rep(e1, 2)),
		}},
		{"grpo", [][]float64{rep(gr(1), 6), rep(gr(0), 6), rep(gr(1), 7), rep(gr(1), 3), rep(gr(0), 3)}},
		{"dr_grpo", [][]float64{rep(0.4, 6), rep(-0.6, 6), rep(0.4, 7), rep(0.4, 3), rep(-0.6, 3)}},
		{"rloo", [][]float64{rep(0.5, 6), rep(-0.75, 6), rep(0.5, 7), rep(0.5, 3), rep(-0.75, 3)}},
		// TreePO: mean over depths of r − mean of the subgroup (singletons skipped).
		{"tree_subgroup", [][]float64{
			rep((0.4+1.0/3)/2, 6),              // all, {A,B,C}
			rep((-0.6-2.0/3-0.5)/3, 6),         // all, {A,B,C}, {B,C}
			rep((0.4+1.0/3+0.5)/3, 7),          // all, {A,B,C}, {B,C}
			rep((0.4+0.5)/2, 3), rep(-0.55, 3), // all, {D,E}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkWorkedAdvantages(t, tc.name, tc.want)
		})
	}
}

func TestWorkedExampleSegment(t *testing.T) {
	g := workedExample()
	_, paths := g.Segments()
	c := paths[2]
	s := c[len(c)-1]
	value := func(s *search.Segment) float64 {
		v := 0.0
		for _, l := range s.Leaves {
			v += l.Reward
		}
		return v / float64(len(s.Leaves))
	}
	if len(c) != 3 || value(s) != 1 || value(s.Parent) != 0.5 {
		t.Fatalf("C's path %d segments, V(s) = %v, V(parent) = %v", len(c), value(s), value(s.Parent))
	}
	if l, gl := value(s)-value(s.Parent), value(s)-0.6; math.Abs(l-0.5) > 1e-12 || math.Abs(gl-0.4) > 1e-12 {
		t.Errorf("L = %v, G = %v; want 1/2, 2/5", l, gl)
	}
}

// TestFlatGroupAdvantages: on single-node trees the tree estimators reduce
// to group baselines.
func TestFlatGroupAdvantages(t *testing.T) {
	var nodes []*search.Node
	for i := 0; i < 4; i++ {
		nodes = append(nodes, &search.Node{Tokens: make([]int, i+1)})
	}
	g := search.NewGroup([]int{0}, "flat", nodes)
	for i, r := range []float64{1, 0, 0, 1} {
		g.Leaves()[i].SetOutcome(r, "")
	}
	tree, _ := search.TreeRL{Reweight: true}.Advantages(g)
	po, _ := search.TreePO{}.Advantages(g)
	for i, r := range []float64{1, 0, 0, 1} {
		if tree[i][0] != 2*(r-0.5) || po[i][0] != r-0.5 || len(tree[i]) != i+1 {
			t.Errorf("leaf %d: tree %v, tree_subgroup %v", i, tree[i], po[i])
		}
	}
	one := search.NewGroup([]int{0}, "flat", []*search.Node{{Tokens: []int{1}}})
	one.Leaves()[0].SetOutcome(0.5, "")
	for _, name := range []string{"grpo", "dr_grpo", "rloo"} {
		e, _ := search.NewEstimator(name)
		a, err := e.Advantages(one)
		if err != nil || math.Abs(a[0][0]-0.5) > 1e-5 {
			t.Errorf("%s on one leaf = %v, %v; want the reward (verl: mean 0, std 1)", name, a, err)
		}
	}
}

func TestEstimatorErrors(t *testing.T) {
	if _, err := search.NewEstimator("ppo"); err == nil || !strings.Contains(err.Error(), `"ppo"`) {
		t.Errorf("unknown estimator: %v", err)
	}
	g := workedExample()
	g.Leaves()[3].Scored = false
	for _, name := range search.EstimatorNames() {
		e, err := search.NewEstimator(name)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() != name {
			t.Errorf("NewEstimator(%q).Name() = %q", name, e.Name())
		}
		if _, err := e.Advantages(g); err == nil || !strings.Contains(err.Error(), "leaf 3 has no reward") {
			t.Errorf("%s with an unscored leaf: %v", name, err)
		}
	}
}

// checkWorkedAdvantages sets the advantages of estimator name on the worked
// example, checks each leaf's against want (to 1e-9), and returns the
// group and the estimator.
func checkWorkedAdvantages(t *testing.T, name string, want [][]float64) (*search.Group, search.Estimator) {
	t.Helper()
	g := workedExample()
	est, err := search.NewEstimator(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := search.SetAdvantages(g, est); err != nil {
		t.Fatal(err)
	}
	for i, l := range g.Leaves() {
		if len(l.Advantages) != len(want[i]) {
			t.Fatalf("leaf %d: %d advantages, want %d", i, len(l.Advantages), len(want[i]))
		}
		for j, v := range l.Advantages {
			if math.Abs(v-want[i][j]) > 1e-9 {
				t.Fatalf("leaf %d token %d: %v, want %v (all %v)", i, j, v, want[i][j], l.Advantages)
			}
		}
	}
	return g, est
}
