package passrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/remote"
)

// Spec is one sampling method to measure.
type Spec struct {
	// Name identifies it in tables; Family draws it in one line with others.
	Name, Family string
	// Shape is the tree's shape; entropy trees of one Shape are compared
	// pairwise across fork scores (see ForkScorePairs). "" for none.
	Shape    string
	Strategy search.Strategy
}

// Options configure a measurement.
type Options struct {
	// Prompts is the number of eval-split prompts (indices 0, 1, …).
	Prompts int
	// Batch is the number of leaves generated together: a method
	// generates Batch / (its leaves per prompt) prompts at once, at least
	// one (memory grows with it; small batches waste the batched steps).
	// With a remote policy (RunRemote) those prompts are sent at once, the
	// client's concurrency limiting the requests in flight.
	Batch int
	// K is the i.i.d. reference's samples per prompt; IIDNs the numbers of
	// samples at which its points are reported.
	K     int
	IIDNs []int
	// Specs are the methods compared with the reference.
	Specs     []Spec
	Bootstrap Bootstrap
	// Progress, if not nil, is told after each batch.
	Progress func(method string, done, total int)
}

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.Prompts < 1:
		return fmt.Errorf("prompts = %d, want at least 1", o.Prompts)
	case o.Batch < 1:
		return fmt.Errorf("batch = %d, want at least 1", o.Batch)
	case o.K < 1:
		return fmt.Errorf("k = %d, want at least 1", o.K)
	}
	for _, n := range o.IIDNs {
		if n < 1 || n > o.K {
			return fmt.Errorf("i.i.d. point n = %d: want 1 to k = %d", n, o.K)
		}
	}
	seen := map[string]bool{"iid": true}
	for _, s := range o.Specs {
		if s.Strategy == nil {
			return fmt.Errorf("method %q has no strategy", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("method %q given twice (or named like the i.i.d. reference)", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Result is a measurement: the table's rows (i.i.d. points first), the
// entropy profile and the time each method took.
type Result struct {
	Rows []Row
	// IIDCurve is the i.i.d. reference at every n from 1 to K.
	IIDCurve []Row
	Profile  *Profile
	// Seconds is the wall time of each method's sampling, i.i.d. ("iid")
	// included.
	Seconds map[string]float64
	// Pairs compares fork scores at the same shape: every score against
	// random forks, and entropy against surprisal forks (see
	// ForkScorePairs).
	Pairs []Pair

	// What WriteOutcomes writes (not in the JSON form): the prompts'
	// texts in prompt order, the i.i.d. reference with the points of the
	// table, and every method's outcomes.
	texts   []string
	ref     IID
	iidNs   []int
	methods []Method
}

// Run samples the i.i.d. reference and every method on the same eval
// prompts with setup's policy, sampling settings, seed and task (its
// strategy is replaced; rewards are the verifier's), and compares them.
func Run(ctx context.Context, setup rl.Setup, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	setup.Reward = nil
	if setup.Train.Advantage == "" {
		setup.Train.Advantage = "grpo"
	}
	gen := func(ctx context.Context, st search.Strategy, prompts []task.Prompt, ids []int) ([]*record.Group, error) {
		setup.Strategy = st
		groups, err := setup.Rollouts(ctx, 0, prompts, ids)
		if err != nil {
			return nil, err
		}
		recs := make([]*record.Group, len(groups))
		for i, sg := range groups {
			recs[i] = sg.Record(setup.Tokenizer)
		}
		return recs, nil
	}
	text := func(id int) string { return setup.Tokenizer.DisplayText([]int{id}) }
	return run(ctx, &setup, o, gen, text)
}

// RunRemote is Run for a policy behind an OpenAI-compatible completions
// server: every method's groups come from s (package search/remote), with
// setup's task, seed, sampling settings, per-prompt budget and response
// cap (setup.Policy and setup.Tokenizer are not used). Tokens are those
// the server reports in its usage, entropies s's estimates from the top-k
// log-probabilities. Only strategies with a remote form (flat, entropy and
// random trees) can be measured, and top-k sampling is refused: both are
// checked before anything is sent.
func RunRemote(ctx context.Context, s *remote.Sampler, setup rl.Setup, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	if setup.Sampling.TopK > 0 {
		return nil, fmt.Errorf("passrate: top-k %d: a completions server takes temperature and top-p only", setup.Sampling.TopK)
	}
	for _, sp := range o.Specs {
		if err := s.Check(sp.Strategy); err != nil {
			return nil, fmt.Errorf("passrate: method %s: %w", sp.Name, err)
		}
	}
	est, err := search.NewEstimator(cmp.Or(setup.Train.Advantage, "grpo"))
	if err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	s.Temperature, s.TopP = setup.Sampling.Temperature, setup.Sampling.TopP
	s.MaxTokens, s.Budget = setup.ResponseCap(), setup.Budget
	s.Seed, s.Step = setup.Seed, 0
	gen := func(ctx context.Context, st search.Strategy, prompts []task.Prompt, ids []int) ([]*record.Group, error) {
		groups, err := s.Generate(ctx, st, rl.RemotePrompts(setup.Task, prompts, ids))
		if err != nil {
			return nil, err
		}
		recs := make([]*record.Group, len(groups))
		for i, g := range groups {
			if err := rl.ScoreWithPenalty(setup.Task, nil, s.Text, prompts[i], g, est, nil); err != nil {
				return nil, err
			}
			recs[i] = g.Record(prompts[i].Text, s.Text)
		}
		return recs, nil
	}
	text := func(id int) string {
		if t := s.Text([]int{id}); t != "" {
			return t
		}
		return "⟨no text⟩" // a special token the server writes as nothing
	}
	return run(ctx, &setup, o, gen, text)
}

// generator makes the scored records of a strategy's groups on prompts,
// ids[i] seeding prompts[i]'s streams.
type generator func(ctx context.Context, st search.Strategy, prompts []task.Prompt, ids []int) ([]*record.Group, error)

// run measures the methods of o with gen making the groups (setup gives
// the eval prompts) and text a token's text for the entropy profile.
func run(ctx context.Context, setup *rl.Setup, o Options, gen generator, text func(id int) string) (*Result, error) {
	prof := NewProfile()
	res := &Result{Profile: prof, Seconds: map[string]float64{}}
	iid, err := search.NewStrategy("flat", map[string]string{"n": strconv.Itoa(o.K)})
	if err != nil {
		return nil, fmt.Errorf("passrate: the i.i.d. reference of K = %d: %w", o.K, err)
	}
	flat, err := sampleAll(ctx, setup, gen, Spec{Name: "iid", Family: "iid", Strategy: iid}, o, res,
		func(g *record.Group) error {
			res.texts = append(res.texts, g.Prompt)
			if err := prof.AddIID(g, text); err != nil {
				return err
			}
			q := task.Prompt{Text: g.Prompt}
			return prof.AddSplit(g, func(r string) int { return setup.Task.AnswerStart(q, r) }, text)
		})
	if err != nil {
		return nil, err
	}
	ref, err := NewIID(flat)
	if err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	var methods []Method
	for _, s := range o.Specs {
		outs, err := sampleAll(ctx, setup, gen, s, o, res, func(g *record.Group) error {
			return prof.AddForks(s.Family, g) // a flat group has no forks to count
		})
		if err != nil {
			return nil, err
		}
		methods = append(methods, Method{Name: s.Name, Family: s.Family, Shape: s.Shape, Outcomes: outs})
	}
	iidRows, err := IIDRows(ref, o.IIDNs, o.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	all := make([]int, o.K)
	for i := range all {
		all[i] = i + 1
	}
	if res.IIDCurve, err = IIDRows(ref, all, o.Bootstrap); err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	rows, err := Compare(ref, methods, o.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	res.Rows = append(iidRows, rows...)
	if res.Pairs, err = ForkScorePairs(methods, o.Bootstrap); err != nil {
		return nil, fmt.Errorf("passrate: %w", err)
	}
	res.ref, res.iidNs, res.methods = ref, o.IIDNs, methods
	return res, nil
}

// sampleAll generates one method's scored groups on the eval prompts with
// gen, batch by batch, passes each record to each and returns the outcomes
// in prompt order.
func sampleAll(ctx context.Context, setup *rl.Setup, gen generator, s Spec, o Options, res *Result, each func(*record.Group) error) ([]Outcome, error) {
	start := time.Now()
	outs := make([]Outcome, 0, o.Prompts)
	batch := max(1, o.Batch/leavesPerPrompt(s.Strategy))
	for lo := 0; lo < o.Prompts; lo += batch {
		ids := make([]int, min(batch, o.Prompts-lo))
		for i := range ids {
			ids[i] = lo + i
		}
		prompts, err := setup.Prompts(task.Eval, ids)
		if err != nil {
			return nil, fmt.Errorf("passrate: %s: %w", s.Name, err)
		}
		recs, err := gen(ctx, s.Strategy, prompts, ids)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, err
			}
			return nil, fmt.Errorf("passrate: %s: prompts %d–%d: %w", s.Name, lo, lo+len(ids)-1, err)
		}
		for _, rec := range recs {
			out, err := FromRecord(rec)
			if err != nil {
				return nil, fmt.Errorf("passrate: %s: %w", s.Name, err)
			}
			if err := each(rec); err != nil {
				return nil, fmt.Errorf("passrate: %s: %w", s.Name, err)
			}
			outs = append(outs, out)
		}
		if o.Progress != nil {
			o.Progress(s.Name, len(outs), o.Prompts)
		}
	}
	res.Seconds[s.Name] = time.Since(start).Seconds()
	return outs, nil
}

// leavesPerPrompt is the number of leaves a strategy makes for a prompt
// when nothing limits it, at least 1.
func leavesPerPrompt(st search.Strategy) int { return max(1, st.Leaves()) }
