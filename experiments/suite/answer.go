package suite

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// The policies an answer-time measurement reads: the experiment's base
// policy and a run's final (RL-trained) policy.
const (
	PolicyBase = "base"
	PolicyRL   = "rl"
)

// AnswerTime is a report's measurement at answer time (test-time
// compute): for each seed, the base policy and the final policy of the
// Variant's run at that seed sampled N candidates per held-out prompt
// (flat at each of Ns, and as entropy trees with TreeLeaves leaves), one
// answer chosen per prompt by each selection rule (rl.TTCPoint's methods),
// accuracy against generated tokens per prompt.
type AnswerTime struct {
	// Variant names the runs whose final policies are measured (their
	// config has train.save_final).
	Variant string
	// Ns are the flat candidates per prompt; TreeLeaves the trees' leaves.
	Ns, TreeLeaves []int
	// Checks join the report's checks and decide its verdict with them.
	Checks []AnswerCheck
	// Compare are further paired comparisons, reported without a verdict.
	Compare []AnswerCheck
}

// AnswerCheck compares one selection rule at N with another at answer
// time, paired over seeds.
type AnswerCheck struct {
	// Name identifies the check, as a design that declares it names it
	// (design.Check.Name).
	Name string
	// Policy is PolicyBase or PolicyRL.
	Policy string
	// Method and N name the rule tested (rl.TTCPoint.Method and N).
	Method string
	N      int
	// Against and AgainstN name the rule it is compared with; AgainstN 0
	// takes Against's flat curve at the tested rule's own tokens per
	// prompt, each seed's linearly interpolated between its Ns (matched
	// tokens).
	Against  string
	AgainstN int
	Want     Direction
	// Margin is as Check.Margin, in accuracy.
	Margin float64
	// Premise names the premise the check rests on (design.Check's
	// Premise); one measured by design.WithinPromptAUC reads the reward
	// model's within-prompt AUC on the candidates of the tested rule.
	Premise string
}

// Spec is what an AnswerTime asks a Measurer for.
type Spec struct {
	Ns, TreeLeaves []int
}

// Measured is a Measurer's result for one policy at one seed.
type Measured struct {
	Points []rl.TTCPoint
	// RewardModel describes the reward model that scored best-of-N (its
	// cache entry and held-out AUC), for the report's text.
	RewardModel string
}

// Measurer measures one policy at answer time with run's seed: the base
// policy of run's config (policy PolicyBase) or run's final policy
// (PolicyRL).
type Measurer func(run tracking.Run, policy string, spec Spec) (Measured, error)

// answerResults are an AnswerTime's measurements: per policy, per seed.
type answerResults struct {
	points map[string]map[int64][]rl.TTCPoint
	models []string
}

// measure runs m on the base and final policy of every run of a.Variant.
func (a *AnswerTime) measure(runs []tracking.Run, m Measurer) (answerResults, error) {
	res := answerResults{points: map[string]map[int64][]rl.TTCPoint{}}
	if m == nil {
		return res, fmt.Errorf("answer time: no measurer (Meta.Measure) to read the policies")
	}
	for _, run := range runs {
		if run.Variant != a.Variant {
			continue
		}
		for _, pol := range []string{PolicyBase, PolicyRL} {
			got, err := m(run, pol, Spec{Ns: a.Ns, TreeLeaves: a.TreeLeaves})
			if err != nil {
				return res, fmt.Errorf("answer time, %s policy of run %s (%s seed %d): %w", pol, run.ID, run.Variant, run.Seed, err)
			}
			if res.points[pol] == nil {
				res.points[pol] = map[int64][]rl.TTCPoint{}
			}
			res.points[pol][run.Seed] = got.Points
			if got.RewardModel != "" && !slices.Contains(res.models, got.RewardModel) {
				res.models = append(res.models, got.RewardModel)
			}
		}
	}
	if len(res.points[PolicyRL]) == 0 {
		return res, fmt.Errorf("answer time: no run of variant %q", a.Variant)
	}
	return res, nil
}

// values returns, per seed, a field (acc, tokens or candidates) of the
// point of method at n.
func (r answerResults) values(policy, method string, n int, field func(rl.TTCPoint) float64) map[int64]float64 {
	out := map[int64]float64{}
	for seed, pts := range r.points[policy] {
		for _, p := range pts {
			if p.Method == method && p.N == n {
				out[seed] = field(p)
			}
		}
	}
	return out
}

func acc(p rl.TTCPoint) float64        { return p.Acc }
func tokens(p rl.TTCPoint) float64     { return p.Tokens }
func candidates(p rl.TTCPoint) float64 { return p.Candidates }
func scorerAUC(p rl.TTCPoint) float64  { return p.ScorerAUC }

// matched returns, per seed, the accuracy of method's curve at the tokens
// per prompt at[seed], linearly interpolated between the points around it
// (the nearest end beyond them).
func (r answerResults) matched(policy, method string, at map[int64]float64) (map[int64]float64, error) {
	out := map[int64]float64{}
	for seed, x := range at {
		var xs, ys []float64
		for _, p := range r.points[policy][seed] {
			if p.Method == method {
				xs, ys = append(xs, p.Tokens), append(ys, p.Acc)
			}
		}
		if len(xs) == 0 {
			return nil, fmt.Errorf("answer time: no %s points of the %s policy at seed %d", method, policy, seed)
		}
		out[seed] = interpolate(xs, ys, x)
	}
	return out, nil
}

// interpolate returns the piecewise-linear curve through (xs[i], ys[i])
// at x, after sorting the points by x: the first or last y beyond the
// ends, the mean y of points at equal x.
func interpolate(xs, ys []float64, x float64) float64 {
	type pt struct{ x, y float64 }
	var pts []pt
	for i := range xs {
		pts = append(pts, pt{xs[i], ys[i]})
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	// merge equal xs into their mean
	var m []pt
	for i := 0; i < len(pts); {
		j, sum := i, 0.0
		for ; j < len(pts) && pts[j].x == pts[i].x; j++ {
			sum += pts[j].y
		}
		m = append(m, pt{pts[i].x, sum / float64(j-i)})
		i = j
	}
	switch {
	case len(m) == 0:
		return 0
	case x <= m[0].x:
		return m[0].y
	case x >= m[len(m)-1].x:
		return m[len(m)-1].y
	}
	k := sort.Search(len(m), func(i int) bool { return m[i].x >= x })
	a, b := m[k-1], m[k]
	return a.y + (b.y-a.y)*(x-a.x)/(b.x-a.x)
}

// outcome evaluates one answer-time comparison.
func (r answerResults) outcome(c AnswerCheck) (Outcome, error) {
	a := r.values(c.Policy, c.Method, c.N, acc)
	var b map[int64]float64
	if c.AgainstN == 0 {
		var err error
		if b, err = r.matched(c.Policy, c.Against, r.values(c.Policy, c.Method, c.N, tokens)); err != nil {
			return Outcome{}, err
		}
	} else {
		b = r.values(c.Policy, c.Against, c.AgainstN, acc)
	}
	if len(a) == 0 || len(b) == 0 {
		return Outcome{}, fmt.Errorf("answer time: %s policy has no points of %s at N=%d or %s at N=%d", c.Policy, c.Method, c.N, c.Against, c.AgainstN)
	}
	against := ruleName(c.Against, c.AgainstN)
	if c.AgainstN == 0 {
		against = ruleName(c.Against, 0) + " at the same tokens"
	}
	check := Check{Name: c.Name, Variant: ruleName(c.Method, c.N), Baseline: against, Metric: design.AnswerMetric, At: "answer time, " + policyName(c.Policy), Want: c.Want, Margin: c.Margin, Premise: c.Premise}
	o, err := compare(check, against, a, b)
	if err != nil {
		return o, err
	}
	if ranks(c.Method) && c.N > 1 {
		o.RankAUC = stats.Summarize(sortedValues(r.values(c.Policy, c.Method, c.N, scorerAUC)))
	}
	return o, nil
}

// ranks reports whether a rule selects by the reward model's scores.
func ranks(method string) bool { return method == "best_of_n" || method == "tree_best" }

// outcomes evaluates comparisons in order.
func (r answerResults) outcomes(cs []AnswerCheck) ([]Outcome, error) {
	var out []Outcome
	for _, c := range cs {
		o, err := r.outcome(c)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// policyName is how the report names a policy.
func policyName(p string) string {
	if p == PolicyBase {
		return "base policy"
	}
	return "after RL"
}

// methodNames name the selection rules in the report, in its order.
var methodNames = []struct{ method, name string }{
	{"oracle", "verifier best-of-N (oracle)"},
	{"best_of_n", "reward-model best-of-N"},
	{"majority", "majority of N"},
	{"tree_oracle", "tree, verifier (oracle)"},
	{"tree_best", "tree, reward model"},
	{"tree_majority", "tree, majority"},
}

// ruleName names a rule at N (N 0: the rule's curve).
func ruleName(method string, n int) string {
	name := method
	for _, m := range methodNames {
		if m.method == method {
			name = m.name
		}
	}
	if n == 0 {
		return strings.ReplaceAll(strings.ReplaceAll(name, "-of-N", ""), " of N", "")
	}
	if strings.HasPrefix(method, "tree") {
		return fmt.Sprintf("%s, %d leaves", name, n)
	}
	return strings.ReplaceAll(strings.ReplaceAll(name, "-of-N", fmt.Sprintf("-of-%d", n)), " of N", fmt.Sprintf(" of %d", n))
}

// writeAnswerTable writes one policy's table: each rule at each N, mean ±
// 95% t-interval over seeds of candidates and tokens per prompt and of
// accuracy, and p of the paired t-test against one sample (N = 1).
func writeAnswerTable(p *printer, r answerResults, policy string, a *AnswerTime) {
	seeds := slices.Sorted(maps.Keys(r.points[policy]))
	p.f("## At answer time: %s\n\n", policyName(policy))
	p.f("%d seeds (%s); each seed samples its own held-out prompts. Mean ± 95%% t-interval over seeds; p: paired t-test of the accuracy against one sample a prompt (N = 1) over the seeds; AUC within prompts: how well the reward model orders one prompt's candidates (the share of its right–wrong pairs scored right, ties half, averaged over the prompts that have both).\n\n", len(seeds), strings.Trim(fmt.Sprint(seeds), "[]"))
	p.f("| rule | N | candidates/prompt | tokens/prompt | accuracy | p vs N = 1 | AUC within prompts |\n|:--|--:|--:|--:|--:|--:|--:|\n")
	one := r.values(policy, "oracle", 1, acc)
	for _, m := range methodNames {
		ns := a.Ns
		if strings.HasPrefix(m.method, "tree") {
			ns = a.TreeLeaves
		}
		for _, n := range ns {
			accs := r.values(policy, m.method, n, acc)
			if len(accs) == 0 {
				continue
			}
			xs, ys := paired(accs, one)
			pt := pText(false, xs, ys)
			if n == 1 && !strings.HasPrefix(m.method, "tree") {
				pt = "—"
			}
			auc := "—"
			if ranks(m.method) && n > 1 {
				auc = formatSummary(stats.Summarize(sortedValues(r.values(policy, m.method, n, scorerAUC))))
			}
			p.f("| %s | %d | %s | %s | %s | %s | %s |\n", m.name, n,
				formatSummary(stats.Summarize(sortedValues(r.values(policy, m.method, n, candidates)))),
				formatSummary(stats.Summarize(sortedValues(r.values(policy, m.method, n, tokens)))),
				formatSummary(stats.Summarize(sortedValues(accs))), pt, auc)
		}
	}
	p.f("\n")
}

// writeComparisons writes paired comparisons reported without a verdict.
func writeComparisons(p *printer, outs []Outcome) {
	if len(outs) == 0 {
		return
	}
	p.f("## Further paired comparisons at answer time\n\nNot part of the verdict: paired t-test over seeds, difference = rule − what it is compared with, 95%% interval, MDE as in the checks.\n\n")
	p.f("| rule | against | at | difference | 95%% CI | p | MDE |\n|---|---|---|--:|--:|--:|--:|\n")
	for _, o := range outs {
		p.f("| %s | %s | %s | %+.4g | %+.4g to %+.4g | %.3g | %.3g |\n", o.Variant, o.Against, o.At, o.Test.Diff, o.Test.Lo, o.Test.Hi, o.Test.P, o.MDE)
	}
	p.f("\n")
}
