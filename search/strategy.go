package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/policy"
)

// Strategy generates the rollouts of a training step: one Group per prompt
// of the request, in prompt order.
type Strategy interface {
	// Name is the strategy's name in configs and tables.
	Name() string
	// Generate samples the groups of every prompt of req together, one
	// batched policy step per token.
	Generate(ctx context.Context, req Request) ([]*Group, error)
}

// Prompt is one prompt of a request.
type Prompt struct {
	Tokens []int
	// ID seeds the prompt's random streams with Request.Seed and
	// Request.Step; ids must be distinct within a request. Give the same id
	// to the same draw of a step (e.g. its index among the step's prompts),
	// whatever batch it is generated in.
	ID uint64
	// AnswerStart, if not nil, replaces Request.AnswerStart for this
	// prompt (for tasks whose answer marker depends on the prompt).
	AnswerStart func(response []int) int
}

// Request is what a strategy generates from.
type Request struct {
	// Prompts are generated together; one group each.
	Prompts []Prompt
	// Sampler is the policy.
	Sampler policy.Sampler
	// Sampling is passed to every Step.
	Sampling policy.Sampling
	// EOS lists the token ids that end a response (the id is kept as the
	// response's last token).
	EOS []int
	// MaxTokens is the maximum response length (tokens after the prompt).
	MaxTokens int
	// Budget is the per-prompt limit on generated tokens, 0 for none. It is
	// never exceeded and never truncates a response: a response or branch
	// starts only if the remaining budget covers its longest possible
	// length, MaxTokens minus the tokens it shares.
	Budget int64
	// Seed and Step select the random streams: the stream of a branch is a
	// fixed hash of (Seed, Step, Prompt.ID, branch id).
	Seed, Step uint64
	// AnswerStart returns the index in a response where its answer begins
	// (len(response) if it has not begun); trees never fork at or after it.
	// Nil means the answer never begins.
	AnswerStart func(response []int) int
	// FLOPs returns the forward FLOPs of one position attending to ctx
	// positions (itself included), e.g. policy.Config.ForwardFLOPs; nil counts no FLOPs.
	FLOPs func(ctx int) int64
}

// validate checks the parts of a request every strategy needs.
func (r *Request) validate() error {
	if r.Sampler == nil {
		return errors.New("request: sampler is nil")
	}
	if len(r.Prompts) == 0 {
		return errors.New("request: no prompts")
	}
	if r.MaxTokens < 1 {
		return fmt.Errorf("request: max_tokens = %d, want >= 1", r.MaxTokens)
	}
	if r.Budget < 0 {
		return fmt.Errorf("request: budget = %d, want >= 0 (0: no limit)", r.Budget)
	}
	if r.Budget > 0 && r.Budget < int64(r.MaxTokens) {
		return fmt.Errorf("request: budget = %d is smaller than one max-length response (max_tokens = %d)", r.Budget, r.MaxTokens)
	}
	ids := map[uint64]int{}
	for i, p := range r.Prompts {
		if len(p.Tokens) == 0 {
			return fmt.Errorf("request: prompt %d is empty", i)
		}
		if j, ok := ids[p.ID]; ok {
			return fmt.Errorf("request: prompts %d and %d have the same id %d", j, i, p.ID)
		}
		ids[p.ID] = i
	}
	return nil
}

// Flat samples N independent responses per prompt (GRPO's group).
type Flat struct {
	N int
}

// Name implements Strategy.
func (Flat) Name() string { return "flat" }

// Validate checks the parameters; an error is a *ParamError.
func (f Flat) Validate() error {
	if f.N < 1 {
		return rangeError("flat", "n", f.N, "want >= 1")
	}
	return nil
}

// ForkScore ranks the positions an entropy tree may fork at.
type ForkScore string

// Fork scores.
const (
	// ScoreEntropy is the entropy of the sampling distribution at the
	// position (EPTree's wording).
	ScoreEntropy ForkScore = "entropy"
	// ScoreSurprisal is −log p of the sampled token (what TreeRL's code does).
	ScoreSurprisal ForkScore = "surprisal"
	// ScoreRandom is a uniform number from a counter-based stream of its own.
	ScoreRandom ForkScore = "random"
)

// EntropyTree (EPTree, TreeRL) samples M full responses per prompt, each the
// root of a tree, then L times: in each tree it scores every eligible
// position of every path, takes the top N distinct positions and samples T
// new continuations from each to the end. Leaves per prompt:
// M·(1 + L·N·T) when nothing limits them.
//
// Not eligible: the first token of a node (a root's first token too: a fork
// there would share nothing), positions at or after the answer start, the
// last position of a response, and positions already forked.
type EntropyTree struct {
	M, N, L, T int
	Score      ForkScore
	// As names the strategy ("entropy_tree" if empty).
	As string
}

// DefaultEntropyTree returns the defaults M, N, L, T = 6, 2, 1, 2 with the
// entropy score.
func DefaultEntropyTree() EntropyTree {
	return EntropyTree{M: 6, N: 2, L: 1, T: 2, Score: ScoreEntropy}
}

// Name implements Strategy.
func (e EntropyTree) Name() string {
	if e.As != "" {
		return e.As
	}
	return "entropy_tree"
}

// Validate checks the parameters; an error is a *ParamError.
func (e EntropyTree) Validate() error {
	name := e.Name()
	switch {
	case e.M < 1:
		return rangeError(name, "m", e.M, "want >= 1")
	case e.N < 1:
		return rangeError(name, "n", e.N, "want >= 1")
	case e.L < 0:
		return rangeError(name, "l", e.L, "want >= 0")
	case e.T < 1:
		return rangeError(name, "t", e.T, "want >= 1")
	}
	switch e.Score {
	case ScoreEntropy, ScoreSurprisal, ScoreRandom:
		return nil
	}
	return &ParamError{Strategy: name, Key: "score", Value: string(e.Score),
		Msg: fmt.Sprintf("score = %q, want entropy, surprisal or random", e.Score)}
}

// SegmentTree (TreePO-like) decodes in segments of S tokens; after each
// segment every live path splits into B children (the path itself goes on
// as one of them) until the leaf width W is reached: forks happen only at
// multiples of S, a path splits at most once per boundary, and a group has
// W leaves when nothing ends early. A path holds a share of
// the width; it splits into min(B, share) paths, dividing its share. A path
// that finishes with a share above 1 hands the rest to the live paths of its
// prompt, round robin by node id. A path whose answer has begun no longer
// splits.
type SegmentTree struct {
	S, B, W int
}

// DefaultSegmentTree returns the defaults S, B, W = 8, 2, 8.
func DefaultSegmentTree() SegmentTree { return SegmentTree{S: 8, B: 2, W: 8} }

// Name implements Strategy.
func (SegmentTree) Name() string { return "segment_tree" }

// Validate checks the parameters; an error is a *ParamError.
func (s SegmentTree) Validate() error {
	switch {
	case s.S < 1:
		return rangeError("segment_tree", "s", s.S, "want >= 1")
	case s.B < 2:
		return rangeError("segment_tree", "b", s.B, "want >= 2")
	case s.W < 1:
		return rangeError("segment_tree", "w", s.W, "want >= 1")
	}
	return nil
}

// ParamError is a strategy parameter that is unknown, unparsable or out of
// range: the strategy, the parameter's key and value, and a message that
// names them ("t = 0, want >= 1"). It renders as "entropy_tree: t = 0,
// want >= 1".
type ParamError struct {
	Strategy string
	Key      string
	Value    string
	Msg      string
}

// Error implements error.
func (e *ParamError) Error() string { return e.Strategy + ": " + e.Msg }

// rangeError is the ParamError of an integer parameter out of range.
func rangeError(strategy, key string, v int, want string) *ParamError {
	return &ParamError{Strategy: strategy, Key: key, Value: strconv.Itoa(v), Msg: fmt.Sprintf("%s = %d, %s", key, v, want)}
}

// DefaultFlatN is the default group size of the flat strategy.
const DefaultFlatN = 8

// Names lists the strategy names NewStrategy knows.
func Names() []string { return []string{"flat", "entropy_tree", "random_tree", "segment_tree"} }

// NewStrategy returns the strategy called name with its defaults overridden
// by params (key=value pairs as on the command line; keys: flat: n;
// entropy_tree: m, n, l, t, score; random_tree: m, n, l, t; segment_tree: s,
// b, w). Unknown names and keys, unparsable and invalid values are errors
// that name them; those about a parameter are *ParamError.
func NewStrategy(name string, params map[string]string) (Strategy, error) {
	var (
		st   Strategy
		ints map[string]*int
	)
	var score *ForkScore
	switch name {
	case "flat":
		f := &Flat{N: DefaultFlatN}
		st, ints = f, map[string]*int{"n": &f.N}
	case "entropy_tree", "random_tree":
		e := DefaultEntropyTree()
		if name == "random_tree" {
			e.Score, e.As = ScoreRandom, name
		} else {
			score = &e.Score
		}
		ep := &e
		st, ints = ep, map[string]*int{"m": &ep.M, "n": &ep.N, "l": &ep.L, "t": &ep.T}
	case "segment_tree":
		s := DefaultSegmentTree()
		sp := &s
		st, ints = sp, map[string]*int{"s": &sp.S, "b": &sp.B, "w": &sp.W}
	default:
		return nil, fmt.Errorf("unknown strategy %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		if p, ok := ints[k]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, &ParamError{Strategy: name, Key: k, Value: v, Msg: fmt.Sprintf("%s = %q is not an integer", k, v)}
			}
			*p = n
			continue
		}
		if k == "score" && score != nil {
			*score = ForkScore(strings.TrimSpace(v))
			continue
		}
		keys := slices.Sorted(maps.Keys(ints))
		if score != nil {
			keys = append(keys, "score")
		}
		return nil, &ParamError{Strategy: name, Key: k, Value: v, Msg: fmt.Sprintf("unknown parameter %q (known: %s)", k, strings.Join(keys, ", "))}
	}
	var err error
	switch s := st.(type) {
	case *Flat:
		err = s.Validate()
		st = *s
	case *EntropyTree:
		err = s.Validate()
		st = *s
	case *SegmentTree:
		err = s.Validate()
		st = *s
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Generate implements Strategy.
func (f Flat) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, f.Name(), func() planner { return &flatPlan{n: f.N} })
}

// Generate implements Strategy.
func (e EntropyTree) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, e.Name(), func() planner { return &entropyPlan{cfg: e} })
}

// Generate implements Strategy.
func (s SegmentTree) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, s.Name(), func() planner { return &segmentPlan{cfg: s} })
}
