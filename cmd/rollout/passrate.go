package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/passrate"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/search"
)

// passrateArgs are the flags of `rollout passrate`.
type passrateArgs struct {
	variant, cache, out, format string
	sets, shapes, segments      []string
	scores, methods             []string
	iidNs                       []int
	prompts, k, batch           int
	resamples, bin              int
	seed                        uint64
	remote                      remoteFlags
}

func newPassrateCmd() *cobra.Command {
	var a passrateArgs
	cmd := &cobra.Command{
		Use:   "passrate CONFIG [--variant V] [--policy URL [--model NAME]] [--prompts 1000] [--k 32] [--shape M,N,L,T]... [--score entropy,surprisal,random] [--segment S,B,W]... [--out PREFIX]",
		Short: "PassRate and leaf accuracy against generated tokens: i.i.d. sampling against trees on a base policy (TreeRL Fig. 1, left)",
		Long: `Samples, without training, on the config's base policy (pretrained and cached as rollout run
does) and with its task and sampling settings, the first --prompts eval prompts: K i.i.d.
samples per prompt (flat), and each tree: an entropy tree of every --shape M,N,L,T under every
--score, and a segment tree of every --segment S,B,W. For each it prints the mean generated
tokens per prompt, PassRate (share of prompts with at least one correct leaf) and mean leaf
accuracy with 95% bootstrap intervals over prompts, and against i.i.d. sampling at the same
tokens (pass@n over the K samples, interpolated in n) the paired bootstrap difference and the
i.i.d. tokens needed for the tree's pass rate. At each shape it compares the fork scores,
every score against random and entropy against surprisal: the paired bootstrap difference of
their PassRates over the same prompts and the exact McNemar test (uncorrected) on the prompts
only one of them passes. With --out PREFIX it writes PREFIX_passrate.png,
PREFIX_leafacc.png and PREFIX_entropy.png (mean entropy by response position, and where forks
change the outcome), and PREFIX_outcomes.csv: a row for each method and prompt, with the
columns prompt (the eval prompt's index), prompt_text, method, family and shape (as in the
table), leaves and correct (the prompt's finished and correct responses; for an i.i.d. point,
those of its K samples), tokens (generated for the prompt; for an i.i.d. point at n samples,
n times the mean length of its K samples) and pass (1 when a leaf is correct, else 0; for an
i.i.d. point at n samples, pass@n over the K samples): the mean of pass over the prompts is
the table's PassRate, that of tokens its tokens/prompt. rollout passrate trend compares two
such files.

With --policy URL (and --model NAME) the policy is the one behind that OpenAI-compatible
server instead of the base policy: the i.i.d. samples and the entropy trees go through its
completions API, tokens count as the server reports them and entropies are estimated from
its top-k log-probabilities. The segment tree has no remote form: --segment is refused and
none is measured.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPassrate(cmd, args[0], a) },
	}
	f := cmd.Flags()
	f.StringVar(&a.variant, "variant", "", "variant of the config (default: the first)")
	f.StringArrayVar(&a.sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	f.StringVar(&a.cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	f.IntVar(&a.prompts, "prompts", 1000, "eval prompts")
	f.IntVar(&a.k, "k", 32, "i.i.d. samples per prompt (the reference curve ends at K)")
	f.IntSliceVar(&a.iidNs, "iid-n", defaultIIDNs, "i.i.d. points of the table (each ≤ K; by default those ≤ K, and K)")
	f.StringArrayVar(&a.shapes, "shape", []string{"2,2,1,1", "6,2,1,2"}, "entropy-tree shape M,N,L,T (repeatable)")
	f.StringSliceVar(&a.scores, "score", []string{"entropy", "surprisal", "random"}, "fork scores of the entropy trees")
	f.StringArrayVar(&a.segments, "segment", []string{"16,2,8"}, "segment-tree shape S,B,W (repeatable)")
	f.StringArrayVar(&a.methods, "method", nil, "any registered strategy as NAME or NAME:key=value,key=value (e.g. tree_grpo:m=4,n=2; repeatable)")
	f.IntVar(&a.batch, "batch", 1024, "leaves generated together (a method takes batch / its leaves per prompt prompts at once)")
	f.Uint64Var(&a.seed, "seed", 1, "seed of the prompts and sampling streams")
	f.IntVar(&a.resamples, "resamples", 2000, "bootstrap resamples")
	f.IntVar(&a.bin, "bin", 4, "positions per bin of the fork-outcome curve of the entropy plot")
	f.StringVar(&a.out, "out", "", "write PREFIX_passrate.png, PREFIX_leafacc.png, PREFIX_entropy.png and PREFIX_outcomes.csv")
	f.StringVar(&a.format, "format", "markdown", "markdown or json")
	a.remote.add(cmd)
	cmd.AddCommand(newPassrateTrendCmd())
	return cmd
}

// defaultIIDNs are the i.i.d. sample counts of passrate's table when
// --iid-n is not given, before clipIIDNs fits them to --k.
var defaultIIDNs = []int{1, 2, 4, 8, 16, 32}

// clipIIDNs fits the default i.i.d. sample counts to k: those up to k,
// then k itself (the reference curve's end) when it is not among them.
func clipIIDNs(ns []int, k int) []int {
	var out []int
	for _, n := range ns {
		if n <= k {
			out = append(out, n)
		}
	}
	if k >= 1 && !slices.Contains(out, k) {
		out = append(out, k)
	}
	return out
}

// pickVariant is the config's variant called name, or its first when
// name is empty.
func pickVariant(f *config.File, name string) (config.Experiment, error) {
	if name == "" {
		return f.Variants[0].Config, nil
	}
	names := make([]string, len(f.Variants))
	for i, v := range f.Variants {
		if v.Name == name {
			return v.Config, nil
		}
		names[i] = v.Name
	}
	return config.Experiment{}, usageError{fmt.Errorf("--variant %q: the config has %v", name, names)}
}

// passrateSpecs builds the methods of the flags, each through the
// strategy registry: every shape under every score (entropy_tree, or
// random_tree for the random score), then every segment tree.
func passrateSpecs(shapes, scores, segments []string) ([]passrate.Spec, error) {
	var specs []passrate.Spec
	for _, sh := range shapes {
		v, err := parseInts("--shape", sh, 4)
		if err != nil {
			return nil, err
		}
		for _, sc := range scores {
			name, params := "entropy_tree", map[string]string{"score": sc}
			if sc == string(search.ScoreRandom) {
				name, params = "random_tree", map[string]string{}
			}
			for i, k := range []string{"m", "n", "l", "t"} {
				params[k] = strconv.Itoa(v[i])
			}
			st, err := search.NewStrategy(name, params)
			if err != nil {
				return nil, fmt.Errorf("--shape %s --score %s: %w", sh, sc, err)
			}
			specs = append(specs, passrate.Spec{Name: fmt.Sprintf("%s(%s)", sc, sh), Family: sc, Shape: fmt.Sprintf("%d,%d,%d,%d", v[0], v[1], v[2], v[3]), Strategy: st})
		}
	}
	for _, sg := range segments {
		v, err := parseInts("--segment", sg, 3)
		if err != nil {
			return nil, err
		}
		st, err := search.NewStrategy("segment_tree", map[string]string{"s": strconv.Itoa(v[0]), "b": strconv.Itoa(v[1]), "w": strconv.Itoa(v[2])})
		if err != nil {
			return nil, fmt.Errorf("--segment %s: %w", sg, err)
		}
		specs = append(specs, passrate.Spec{Name: fmt.Sprintf("segment(%s)", sg), Family: "segment", Strategy: st})
	}
	return specs, nil
}

// parseInts reads n comma-separated integers of a flag's value.
func parseInts(flag, s string, n int) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("%s %q: want %d comma-separated integers", flag, s, n)
	}
	out := make([]int, n)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %q is not an integer", flag, s, p)
		}
		out[i] = v
	}
	return out, nil
}

// runPassrate is `rollout passrate`.
func runPassrate(cmd *cobra.Command, cfgPath string, a passrateArgs) error {
	o, err := passrateOptions(cmd, &a)
	if err != nil {
		return err
	}
	f, err := loadConfig(cfgPath, a.sets)
	if err != nil {
		return err
	}
	c, err := pickVariant(f, a.variant)
	if err != nil {
		return err
	}
	pr := newProgress(cmd.ErrOrStderr())
	bars := map[string]*bar{}
	o.Progress = func(method string, done, total int) {
		b, ok := bars[method]
		if !ok {
			b = pr.add(method, total)
			bars[method] = b
		}
		b.set(done, "")
	}
	var res *passrate.Result
	name := c.Name + " base policy"
	if a.remote.url != "" {
		res, name, err = passrateRemote(cmd, c, a, o)
	} else {
		res, err = passrateLocal(cmd, c, a, o)
	}
	pr.wait()
	if err != nil {
		return err
	}
	if a.out != "" {
		if err := writePassratePlots(a.out, name, a.prompts, a.bin, res); err != nil {
			return err
		}
		if err := writePassrateOutcomes(a.out+"_outcomes.csv", res); err != nil {
			return err
		}
	}
	if a.format == "json" {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
	}
	return writePassrate(cmd.OutOrStdout(), res)
}

// passrateOptions checks the flags of `rollout passrate` and returns the
// measurement's options (without progress). With --policy it refuses
// --segment and --cache and measures no segment tree.
func passrateOptions(cmd *cobra.Command, a *passrateArgs) (passrate.Options, error) {
	if a.format != "markdown" && a.format != "json" {
		return passrate.Options{}, usageError{fmt.Errorf("--format %q: want markdown or json", a.format)}
	}
	if err := a.remote.check(cmd); err != nil {
		return passrate.Options{}, err
	}
	if a.remote.url != "" {
		if cmd.Flags().Changed("segment") {
			return passrate.Options{}, usageError{fmt.Errorf("--segment and --policy: the segment tree has no remote form (a served policy is measured with i.i.d. samples and entropy trees)")}
		}
		if cmd.Flags().Changed("cache") {
			return passrate.Options{}, usageError{fmt.Errorf("--cache and --policy: a served policy needs no base-policy cache")}
		}
		a.segments = nil
	}
	specs, err := passrateSpecs(a.shapes, a.scores, a.segments)
	if err != nil {
		return passrate.Options{}, usageError{err}
	}
	if !cmd.Flags().Changed("iid-n") {
		a.iidNs = clipIIDNs(a.iidNs, a.k)
	}
	for _, m := range a.methods {
		sp, err := methodSpec(m)
		if err != nil {
			return passrate.Options{}, usageError{err}
		}
		specs = append(specs, sp)
	}
	o := passrate.Options{Prompts: a.prompts, Batch: a.batch, K: a.k, IIDNs: a.iidNs, Specs: specs,
		Bootstrap: passrate.Bootstrap{Resamples: a.resamples, Level: 0.95, Seed: a.seed}}
	if err := o.Validate(); err != nil {
		return passrate.Options{}, usageError{fmt.Errorf("passrate: %w", err)}
	}
	if a.resamples < 100 {
		return passrate.Options{}, usageError{fmt.Errorf("--resamples %d: want at least 100", a.resamples)}
	}
	if a.bin < 1 {
		return passrate.Options{}, usageError{fmt.Errorf("--bin %d: want at least 1", a.bin)}
	}
	return o, nil
}

// passrateLocal measures c's base policy, pretrained and cached under
// --cache as rollout run does.
func passrateLocal(cmd *cobra.Command, c config.Experiment, a passrateArgs, o passrate.Options) (*passrate.Result, error) {
	dir, err := cacheDir(a.cache)
	if err != nil {
		return nil, err
	}
	base, err := runner.BasePolicy(cmd.Context(), c, dir, nil)
	if err != nil {
		return nil, err
	}
	setup, err := runner.NewSetup(c, a.seed, base.Dir, "")
	if err != nil {
		return nil, err
	}
	return passrate.Run(cmd.Context(), setup, o)
}

// passrateRemote measures the policy behind --policy with c's task,
// sampling settings, budget and response cap, and returns the result and
// the policy's name for the figures.
func passrateRemote(cmd *cobra.Command, c config.Experiment, a passrateArgs, o passrate.Options) (*passrate.Result, string, error) {
	t, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return nil, "", usageError{err}
	}
	sp := c.Rollout.Sampling()
	if sp.TopK > 0 {
		return nil, "", usageError{fmt.Errorf("rollout.top_k = %d and --policy: a completions server takes temperature and top-p only", sp.TopK)}
	}
	setup := rl.Setup{Task: t, Sampling: sp, Budget: c.Rollout.Budget, MaxTokens: c.Rollout.MaxTokens, Train: c.Train, Seed: a.seed}
	s, err := a.remote.dial(cmd.Context())
	if err != nil {
		return nil, "", err
	}
	res, err := passrate.RunRemote(cmd.Context(), s, setup, o)
	return res, fmt.Sprintf("%s (served at %s)", s.Model, a.remote.url), err
}

// writePassratePlots writes the three figures under prefix; name is the
// policy measured ("long_add base policy").
func writePassratePlots(prefix, name string, prompts, bin int, res *passrate.Result) error {
	what := fmt.Sprintf("%s, %d eval prompts; 95%% bootstrap CIs over prompts", name, prompts)
	if err := passrate.PlotRows(prefix+"_passrate.png", "PassRate against tokens: "+what, res.IIDCurve, res.Rows, passrate.MetricPass); err != nil {
		return err
	}
	if err := passrate.PlotRows(prefix+"_leafacc.png", "Leaf accuracy against tokens: "+what, res.IIDCurve, res.Rows, passrate.MetricAcc); err != nil {
		return err
	}
	var fams []string
	for _, f := range []string{"random", "entropy"} {
		if _, ok := res.Profile.Forks[f]; ok {
			fams = append(fams, f)
		}
	}
	return passrate.PlotProfile(prefix+"_entropy.png", "Entropy by response position: "+name, res.Profile, fams, bin)
}

// writePassrateOutcomes writes the result's per-prompt outcomes as CSV to
// path (see passrate.WriteOutcomes).
func writePassrateOutcomes(path string, res *passrate.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("outcomes: %w", err)
	}
	if err := passrate.WriteOutcomes(f, res.Outcomes()); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("outcomes: %w", err)
	}
	return nil
}

// writePassrate prints the result as markdown tables.
func writePassrate(w io.Writer, res *passrate.Result) error {
	pct := func(iv passrate.Interval) string {
		return fmt.Sprintf("%.1f [%.1f, %.1f]", 100*iv.Est, 100*iv.Lo, 100*iv.Hi)
	}
	diff := func(iv passrate.Interval) string {
		return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", 100*iv.Est, 100*iv.Lo, 100*iv.Hi)
	}
	var b strings.Builder
	b.WriteString("| method | leaves | tokens/prompt | PassRate % | leaf acc % | i.i.d. PassRate % at these tokens | Δ PassRate (paired) | Δ leaf acc (paired) | i.i.d. tokens for this PassRate | tokens ratio |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range res.Rows {
		iidTok := fmt.Sprintf("%.0f", r.IIDTokens)
		if !r.TokensReached {
			iidTok = "> " + iidTok
		}
		cmp, dPass, dAcc := "beyond K", "—", "—"
		if r.Family == "iid" {
			cmp = "—"
		} else if r.InRange {
			cmp, dPass, dAcc = fmt.Sprintf("%.1f", 100*r.IIDPass), diff(r.DiffPass), diff(r.DiffAcc)
		}
		ratio := fmt.Sprintf("%.2f", r.TokenRatio)
		if !r.TokensReached {
			ratio = "< " + ratio
		}
		if r.Family == "iid" {
			iidTok, ratio = "—", "—"
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.0f | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Method, r.Leaves, r.Tokens, pct(r.Pass), pct(r.Acc), cmp, dPass, dAcc, iidTok, ratio)
	}
	writePairs(&b, res.Pairs)
	p := res.Profile
	fmt.Fprintf(&b, "\ni.i.d. responses: mean length %.1f tokens; mean entropy %.3f nats a position: %.3f before the answer (%d positions), %.3f in the answer and the end token (%d).\n\n",
		p.MeanLength(), meanOf(p), p.MeanReasoningEntropy(), p.ReasoningCount, p.MeanAnswerEntropy(), p.AnswerCount)
	b.WriteString("| after | positions | mean entropy (nats) | share of all entropy |\n| --- | --- | --- | --- |\n")
	for i, c := range p.Classes() {
		if i == 8 {
			break
		}
		// With --policy the character is the server's: escaped if a control.
		fmt.Fprintf(&b, "| `%s` | %d | %.3f | %.1f%% |\n", openai.Printable(c.After), c.Positions, c.Mean, 100*c.Share)
	}
	b.WriteString("\n| method | seconds |\n| --- | --- |\n")
	names := make([]string, 0, len(res.Seconds))
	for k := range res.Seconds {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "| %s | %.0f |\n", k, res.Seconds[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePairs writes the fork-score comparisons at equal shapes as a
// markdown table (nothing when there are none).
func writePairs(b *strings.Builder, pairs []passrate.Pair) {
	if len(pairs) == 0 {
		return
	}
	b.WriteString("\nFork scores at the same shape, paired over prompts (A − B):\n\n")
	b.WriteString("| A | B | Δ PassRate (paired) | Δ tokens/prompt | prompts only A passes | only B passes | McNemar p (exact) |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range pairs {
		fmt.Fprintf(b, "| %s | %s | %+.1f [%+.1f, %+.1f] | %+.0f | %d | %d | %.3g |\n", p.A, p.B,
			100*p.DiffPass.Est, 100*p.DiffPass.Lo, 100*p.DiffPass.Hi, p.DiffTokens, p.OnlyA, p.OnlyB, p.McNemarP)
	}
}

// meanOf is the mean entropy over every position of every i.i.d. response.
func meanOf(p *passrate.Profile) float64 {
	var s float64
	var n int64
	for i, v := range p.EntropySum {
		s += v
		n += p.Count[i]
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// methodSpec builds the method of a --method flag, NAME or
// NAME:key=value,key=value, named as given.
func methodSpec(flag string) (passrate.Spec, error) {
	name, params, err := parseMethod("--method", flag)
	if err != nil {
		return passrate.Spec{}, err
	}
	st, err := search.NewStrategy(name, params)
	if err != nil {
		return passrate.Spec{}, fmt.Errorf("--method %s: %w", flag, err)
	}
	return passrate.Spec{Name: flag, Family: name, Strategy: st}, nil
}

// parseMethod reads a registered strategy as a flag gives it, NAME or
// NAME:key=value,key=value.
func parseMethod(flagName, flag string) (name string, params map[string]string, err error) {
	name, list, _ := strings.Cut(flag, ":")
	params = map[string]string{}
	if list != "" {
		for _, kv := range strings.Split(list, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return "", nil, fmt.Errorf("%s %s: %q is not key=value", flagName, flag, kv)
			}
			params[strings.TrimSpace(k)] = v
		}
	}
	return name, params, nil
}
