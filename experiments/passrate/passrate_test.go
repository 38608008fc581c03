package passrate

import (
	"math"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/recordtest"
)

// near reports whether a and b agree to 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A hand-built set of trees: the outcome of each group counts its leaves,
// the correct ones and the generated tokens.
func TestFromRecord(t *testing.T) {
	tree := recordtest.Tree() // rewards 0, 1, 1; 9 generated tokens
	flat := recordtest.Flat(3, 5, 4)
	allWrong := recordtest.Tree()
	for i := range allWrong.Leaves {
		allWrong.Leaves[i].Reward = 0
	}
	half := recordtest.Tree()
	half.Leaves[1].Reward = 0.5 // partial credit is not correct
	for _, tc := range []struct {
		name string
		g    record.Group
		want Outcome
	}{
		{"tree", tree, Outcome{Tokens: 9, Leaves: 3, Correct: 2}},
		{"flat", flat, Outcome{Tokens: 20, Leaves: 5, Correct: 2}},
		{"all wrong", allWrong, Outcome{Tokens: 9, Leaves: 3, Correct: 0}},
		{"partial credit", half, Outcome{Tokens: 9, Leaves: 3, Correct: 1}},
	} {
		got, err := FromRecord(&tc.g)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestFromRecordBadInput(t *testing.T) {
	unscored := recordtest.Tree()
	unscored.Leaves[2].Scored = false
	empty := recordtest.Tree()
	empty.Leaves = nil
	for _, tc := range []struct {
		name string
		g    record.Group
		want string
	}{
		{"unscored", unscored, "leaf 2 (node 2) is not scored"},
		{"no leaves", empty, "0 leaves"},
	} {
		_, err := FromRecord(&tc.g)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.g.Prompt) {
			t.Errorf("%s: error %v, want one naming the prompt and %q", tc.name, err, tc.want)
		}
	}
}

// treeMethod is the outcomes of three hand-built trees: prompts 0 and 2
// have a correct leaf, prompt 1 none.
func treeMethod(t *testing.T) Method {
	t.Helper()
	a := recordtest.Tree() // 2 of 3 correct
	b := recordtest.Tree()
	for i := range b.Leaves {
		b.Leaves[i].Reward = 0
	}
	c := recordtest.Tree()
	c.Leaves[1].Reward = 0 // 1 of 3 correct
	var m Method
	m.Name, m.Family = "entropy(1,2,1,1)", "entropy"
	for _, g := range []record.Group{a, b, c} {
		o, err := FromRecord(&g)
		if err != nil {
			t.Fatal(err)
		}
		m.Outcomes = append(m.Outcomes, o)
	}
	return m
}

// reference is an i.i.d. reference of three prompts with K = 2 samples of
// 10 tokens each: pass@1 = 0.5, 0, 1; pass@2 = 1, 0, 1.
func reference(t *testing.T) IID {
	t.Helper()
	r, err := NewIID([]Outcome{{Tokens: 20, Leaves: 2, Correct: 1}, {Tokens: 20, Leaves: 2}, {Tokens: 20, Leaves: 2, Correct: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPassRateAndLeafAccuracy(t *testing.T) {
	m := treeMethod(t)
	all := []int{0, 1, 2}
	for _, tc := range []struct {
		name      string
		idx       []int
		pass, acc float64
		tokens    float64
	}{
		{"all prompts", all, 2.0 / 3, (2.0/3 + 0 + 1.0/3) / 3, 9},
		{"prompt 1 alone", []int{1}, 0, 0, 9},
		{"a resample with repeats", []int{0, 0, 1}, 2.0 / 3, (2.0/3 + 2.0/3) / 3, 9},
	} {
		if got := passRate(m.Outcomes, tc.idx); !near(got, tc.pass) {
			t.Errorf("%s: pass rate %v, want %v", tc.name, got, tc.pass)
		}
		if got := leafAcc(m.Outcomes, tc.idx); !near(got, tc.acc) {
			t.Errorf("%s: leaf accuracy %v, want %v", tc.name, got, tc.acc)
		}
		if got := meanTokens(m.Outcomes, tc.idx); !near(got, tc.tokens) {
			t.Errorf("%s: tokens %v, want %v", tc.name, got, tc.tokens)
		}
	}
}

// The i.i.d. curve: pass@n interpolated in n, at n = tokens / mean length,
// and its inverse.
func TestIIDCurve(t *testing.T) {
	r := reference(t)
	if r.MaxN() != 2 {
		t.Fatalf("MaxN %d, want 2", r.MaxN())
	}
	for _, tc := range []struct {
		tokens, pass float64
		ok           bool
	}{
		{0, 0, true},
		{5, 0.25, true}, // half a sample: halfway from 0 to pass@1
		{10, 0.5, true}, // pass@1 = (0.5 + 0 + 1) / 3
		{15, 7.0 / 12, true},
		{20, 2.0 / 3, true}, // pass@2 = (1 + 0 + 1) / 3
		{21, 0, false},      // beyond K samples
	} {
		got, ok := r.PassAtTokens(nil, tc.tokens)
		if ok != tc.ok || (ok && !near(got, tc.pass)) {
			t.Errorf("PassAtTokens(%v) = %v, %v; want %v, %v", tc.tokens, got, ok, tc.pass, tc.ok)
		}
	}
	for _, tc := range []struct {
		pass, tokens float64
		ok           bool
	}{
		{0, 0, true},
		{0.25, 5, true},
		{0.5, 10, true},
		{7.0 / 12, 15, true},
		{2.0 / 3, 20, true},
		{0.7, 20, false}, // K samples fall short: their cost
	} {
		got, ok := r.TokensFor(nil, tc.pass)
		if ok != tc.ok || !near(got, tc.tokens) {
			t.Errorf("TokensFor(%v) = %v, %v; want %v, %v", tc.pass, got, ok, tc.tokens, tc.ok)
		}
	}
}

func TestCompare(t *testing.T) {
	r := reference(t)
	rows, err := Compare(r, []Method{treeMethod(t)}, DefaultBootstrap())
	if err != nil {
		t.Fatal(err)
	}
	row := rows[0]
	// 9 tokens = 0.9 samples: 0.9 · pass@1 = 0.45.
	if !row.InRange || !near(row.IIDPass, 0.45) {
		t.Errorf("i.i.d. pass at 9 tokens: %v (in range %v), want 0.45", row.IIDPass, row.InRange)
	}
	if !near(row.Pass.Est, 2.0/3) || !near(row.DiffPass.Est, 2.0/3-0.45) {
		t.Errorf("pass %v, difference %v; want 2/3 and 2/3 − 0.45", row.Pass.Est, row.DiffPass.Est)
	}
	if !near(row.DiffAcc.Est, 1.0/3-0.5) {
		t.Errorf("leaf accuracy difference %v, want 1/3 − 1/2", row.DiffAcc.Est)
	}
	// The tree's pass rate 2/3 costs i.i.d. sampling 20 tokens.
	if !row.TokensReached || !near(row.IIDTokens, 20) || !near(row.TokenRatio, 9.0/20) {
		t.Errorf("i.i.d. tokens %v (reached %v), ratio %v; want 20, true, 0.45", row.IIDTokens, row.TokensReached, row.TokenRatio)
	}
	for name, iv := range map[string]Interval{"pass": row.Pass, "acc": row.Acc, "Δpass": row.DiffPass, "Δacc": row.DiffAcc} {
		if !(iv.Lo <= iv.Est && iv.Est <= iv.Hi) {
			t.Errorf("%s: interval [%v, %v] does not hold the estimate %v", name, iv.Lo, iv.Hi, iv.Est)
		}
	}
	// A method past the reference's end has no matched comparison.
	big := treeMethod(t)
	for i := range big.Outcomes {
		big.Outcomes[i].Tokens = 100
	}
	rows, err = Compare(r, []Method{big}, DefaultBootstrap())
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].InRange || rows[0].DiffPass != (Interval{}) {
		t.Errorf("a method at 100 tokens against K = 2 samples of 10: in range %v, Δ %+v", rows[0].InRange, rows[0].DiffPass)
	}
}

// The same inputs and seed give the same intervals; another seed other
// resamples.
func TestBootstrapDeterminism(t *testing.T) {
	var outs, flat []Outcome
	for i := range 200 {
		outs = append(outs, Outcome{Tokens: int64(30 + i%7), Leaves: 3, Correct: i % 4 % 3})
		flat = append(flat, Outcome{Tokens: 40, Leaves: 4, Correct: i % 5 % 4})
	}
	r, err := NewIID(flat)
	if err != nil {
		t.Fatal(err)
	}
	m := []Method{{Name: "tree", Family: "entropy", Outcomes: outs}}
	b := Bootstrap{Resamples: 500, Level: 0.95, Seed: 7}
	first, err := Compare(r, m, b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Compare(r, m, b)
	if first[0] != again[0] {
		t.Errorf("same seed, different rows:\n%+v\n%+v", first[0], again[0])
	}
	b.Seed = 8
	other, _ := Compare(r, m, b)
	if other[0].Pass == first[0].Pass && other[0].DiffPass == first[0].DiffPass {
		t.Errorf("seeds 7 and 8 gave the same intervals %+v", first[0].Pass)
	}
	if other[0].Pass.Est != first[0].Pass.Est {
		t.Errorf("the estimate moved with the seed: %v, %v", first[0].Pass.Est, other[0].Pass.Est)
	}
	iid1, _ := IIDRows(r, []int{1, 4}, b)
	iid2, _ := IIDRows(r, []int{1, 4}, b)
	for i := range iid1 {
		if iid1[i] != iid2[i] {
			t.Errorf("i.i.d. row %d differs between two calls", i)
		}
	}
}

func TestBadInput(t *testing.T) {
	r := reference(t)
	good := treeMethod(t)
	short := good
	short.Outcomes = good.Outcomes[:2]
	over := treeMethod(t)
	over.Outcomes[1].Correct = 4
	none := treeMethod(t)
	none.Outcomes[2].Leaves = 0
	neg := treeMethod(t)
	neg.Outcomes[0].Tokens = -1
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"too few prompts", second(Compare(r, []Method{short}, DefaultBootstrap())), "2 prompts, want 3"},
		{"more correct than leaves", second(Compare(r, []Method{over}, DefaultBootstrap())), "prompt 1: 4 correct of 3 leaves"},
		{"no leaves", second(Compare(r, []Method{none}, DefaultBootstrap())), "prompt 2: 0 leaves"},
		{"negative tokens", second(Compare(r, []Method{neg}, DefaultBootstrap())), "prompt 0: -1 tokens"},
		{"few resamples", second(Compare(r, []Method{good}, Bootstrap{Resamples: 10, Level: 0.95})), "10 resamples"},
		{"bad level", second(Compare(r, []Method{good}, Bootstrap{Resamples: 100, Level: 95})), "confidence level 95"},
		{"empty reference", second(NewIID(nil)), "no prompts"},
		{"bad reference", second(NewIID([]Outcome{{Leaves: 2, Correct: 3}})), "prompt 0: 3 correct of 2 leaves"},
		{"i.i.d. point beyond K", second(IIDRows(r, []int{3}, DefaultBootstrap())), "n = 3: want 1 to 2"},
		{"options: no prompts", Options{Batch: 1, K: 1}.Validate(), "prompts = 0"},
		{"options: n beyond k", Options{Prompts: 1, Batch: 1, K: 4, IIDNs: []int{8}}.Validate(), "n = 8: want 1 to k = 4"},
		{"options: no strategy", Options{Prompts: 1, Batch: 1, K: 4, Specs: []Spec{{Name: "x"}}}.Validate(), `method "x" has no strategy`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

// second returns the error of a two-value call.
func second[T any](_ T, err error) error { return err }

func TestLeavesPerPrompt(t *testing.T) {
	for _, tc := range []struct {
		st   search.Strategy
		want int
	}{
		{search.Flat{N: 32}, 32},
		{search.EntropyTree{M: 6, N: 2, L: 1, T: 2}, 30},
		{search.EntropyTree{M: 2, N: 2, L: 2, T: 1}, 10},
		{search.SegmentTree{S: 16, B: 2, W: 8}, 8},
		{search.Flat{}, 1},
	} {
		if got := leavesPerPrompt(tc.st); got != tc.want {
			t.Errorf("%+v: %d leaves, want %d", tc.st, got, tc.want)
		}
	}
}

// A strategy given as a pointer counts its leaves as its value does.
func TestLeavesPerPromptPointer(t *testing.T) {
	for _, tc := range []struct {
		st   search.Strategy
		want int
	}{
		{&search.Flat{N: 32}, 32},
		{&search.EntropyTree{M: 6, N: 2, L: 1, T: 2}, 30},
		{&search.SegmentTree{S: 16, B: 2, W: 8}, 8},
	} {
		if got := leavesPerPrompt(tc.st); got != tc.want {
			t.Errorf("%+v: %d leaves, want %d", tc.st, got, tc.want)
		}
	}
}
