package search

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The package keeps three registries: strategies, advantage estimators and
// fork scores, each a name → constructor table that every caller looks up
// (configs, the command line, the budget accounting, the remote sampler).
// The built-in entries are registered by the init function below; a
// package of its own adds one the same way, from its own init function
// (see the examples of RegisterStrategy, RegisterEstimator and
// RegisterForkScore). This is the database/sql driver idiom: the tables
// are filled while packages initialise and only read afterwards, so they
// hold no state that changes while a program runs (the lock only keeps a
// misplaced late Register from racing with readers). A registry value
// passed to every caller would do the same at the cost of threading it
// through configs, commands and the remote sampler, which all need the
// same one. Registering a name twice, an empty name or a nil constructor
// panics: it is a programming error, caught as soon as the program starts.
func init() {
	RegisterStrategy("flat", newFlat)
	RegisterStrategy("entropy_tree", newEntropyTree)
	RegisterStrategy("random_tree", newRandomTree)
	RegisterStrategy("segment_tree", newSegmentTree)
	RegisterStrategy("tree_grpo", newStepTree)
	RegisterStrategy("arpo", newARPO)
	RegisterStrategy("pivot", newPivot)

	RegisterEstimator("grpo", func() Estimator { return GRPO{Epsilon: DefaultEpsilon} })
	RegisterEstimator("dr_grpo", func() Estimator { return DrGRPO{} })
	RegisterEstimator("rloo", func() Estimator { return RLOO{} })
	RegisterEstimator("tree", func() Estimator { return TreeRL{Reweight: true} })
	RegisterEstimator("tree_nosqrt", func() Estimator { return TreeRL{Reweight: false} })
	RegisterEstimator("tree_subgroup", func() Estimator { return TreePO{} })
	RegisterEstimator("tree_grpo", func() Estimator { return TreeGRPO{Epsilon: DefaultEpsilon} })
	RegisterEstimator("spo", func() Estimator { return SPO{} })

	RegisterForkScore(ScoreEntropy, entropyScore)
	RegisterForkScore(ScoreSurprisal, surprisalScore)
	RegisterForkScore(ScoreRandom, randomScore)
	RegisterForkScore(ScoreStepEntropy, stepEntropyScore)
	RegisterForkScore(ScoreStepRandom, stepRandomScore)
	RegisterForkScore(ScoreAttention, attentionScore)
}

var (
	strategies = newRegistry[func(*Params) (Strategy, error)]("strategy")
	estimators = newRegistry[func() Estimator]("advantage estimator")
	forkScores = newRegistry[ScoreFunc]("fork score")
)

// RegisterStrategy makes the strategy called name known to NewStrategy
// (and so to configs and every command): parse builds it from its
// parameters, reading each key it knows from p with a default
// (p.Int("n", 8)) and returning the strategy with the error of its
// validation. Unknown and unparsable keys are reported by NewStrategy, so
// parse need not check them. Call it from an init function; it panics if
// name is empty or taken, or parse is nil.
func RegisterStrategy(name string, parse func(p *Params) (Strategy, error)) {
	strategies.register(name, parse)
}

// Names lists the strategy names NewStrategy knows, in registration order
// (the built-in ones first).
func Names() []string { return strategies.names() }

// NewStrategy returns the strategy called name with its defaults overridden
// by params (key=value pairs as on the command line; built-in keys: flat:
// n; entropy_tree: m, n, l, t, score; random_tree: m, n, l, t;
// segment_tree: s, b, w; tree_grpo: m, n, l; arpo: m, n, alpha, beta, k,
// z; pivot: n, k, gamma). Unknown names and keys, unparsable and invalid
// values are errors that name them; those about a parameter are
// *ParamError.
func NewStrategy(name string, params map[string]string) (Strategy, error) {
	parse, ok := strategies.lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	p := &Params{strategy: name, values: params}
	st, err := parse(p)
	if perr := p.Err(); perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("strategy %s: its constructor returned no strategy", name)
	}
	return st, nil
}

// RegisterEstimator makes the advantage estimator called name known to
// NewEstimator (and so to configs). Call it from an init function; it
// panics if name is empty or taken, or newEstimator is nil.
func RegisterEstimator(name string, newEstimator func() Estimator) {
	estimators.register(name, newEstimator)
}

// EstimatorNames lists the names NewEstimator knows, in registration order.
func EstimatorNames() []string { return estimators.names() }

// NewEstimator returns the estimator called name: grpo, dr_grpo, rloo, tree
// (TreeRL with the √ reweighting), tree_nosqrt (TreeRL without it),
// tree_subgroup (TreePO), tree_grpo (Tree-GRPO's intra- plus inter-tree
// advantage), spo (SPO's segment advantage), or one registered by another
// package.
func NewEstimator(name string) (Estimator, error) {
	newEstimator, ok := estimators.lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown advantage estimator %q (known: %s)", name, strings.Join(EstimatorNames(), ", "))
	}
	return newEstimator(), nil
}

// RegisterForkScore makes the fork score called name usable by entropy
// trees (the score parameter) and by EligiblePositions. Call it from an
// init function; it panics if name is empty or taken, or score is nil.
func RegisterForkScore(name ForkScore, score ScoreFunc) {
	forkScores.register(string(name), score)
}

// ForkScores lists the fork scores known, in registration order.
func ForkScores() []ForkScore {
	names := forkScores.names()
	out := make([]ForkScore, len(names))
	for i, n := range names {
		out[i] = ForkScore(n)
	}
	return out
}

// Params are a strategy's key=value parameters as a config or the command
// line gives them, read by the strategy's constructor (RegisterStrategy):
// each read names a key the strategy knows and returns its value, or the
// default when it is not given. A value that does not parse reads as the
// default and is reported by Err, like a key nobody read.
type Params struct {
	strategy string
	values   map[string]string
	known    []string               // keys read, in reading order
	bad      map[string]*ParamError // unparsable values by key
}

// Int returns the integer value of key, or def if it is not given.
func (p *Params) Int(key string, def int) int {
	v, ok := p.read(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.fail(&ParamError{Strategy: p.strategy, Key: key, Value: v, Msg: fmt.Sprintf("%s = %q is not an integer", key, v)})
		return def
	}
	return n
}

// Float returns the number value of key, or def if it is not given.
func (p *Params) Float(key string, def float64) float64 {
	v, ok := p.read(key)
	if !ok {
		return def
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		p.fail(&ParamError{Strategy: p.strategy, Key: key, Value: v, Msg: fmt.Sprintf("%s = %q is not a number", key, v)})
		return def
	}
	return x
}

// String returns the value of key with surrounding spaces removed, or def
// if it is not given.
func (p *Params) String(key, def string) string {
	v, ok := p.read(key)
	if !ok {
		return def
	}
	return strings.TrimSpace(v)
}

// read records key as known and returns its value.
func (p *Params) read(key string) (string, bool) {
	if !slices.Contains(p.known, key) {
		p.known = append(p.known, key)
	}
	v, ok := p.values[key]
	return v, ok
}

func (p *Params) fail(e *ParamError) {
	if p.bad == nil {
		p.bad = map[string]*ParamError{}
	}
	p.bad[e.Key] = e
}

// Err returns the first problem with the given keys in key order, as a
// *ParamError: a value that did not parse, or a key no read asked for.
func (p *Params) Err() error {
	for _, k := range slices.Sorted(maps.Keys(p.values)) {
		if e, ok := p.bad[k]; ok {
			return e
		}
		if !slices.Contains(p.known, k) {
			return &ParamError{Strategy: p.strategy, Key: k, Value: p.values[k],
				Msg: fmt.Sprintf("unknown parameter %q (known: %s)", k, strings.Join(p.known, ", "))}
		}
	}
	return nil
}

// registry is a name → constructor table, filled at init and read after.
type registry[T any] struct {
	kind   string
	mu     sync.RWMutex
	order  []string
	byName map[string]T
}

func newRegistry[T any](kind string) *registry[T] {
	return &registry[T]{kind: kind, byName: map[string]T{}}
}

func (r *registry[T]) register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch _, taken := r.byName[name]; {
	case name == "":
		panic("search: register " + r.kind + " with an empty name")
	case taken:
		panic(fmt.Sprintf("search: %s %q registered twice", r.kind, name))
	case reflect.ValueOf(&v).Elem().IsNil():
		panic(fmt.Sprintf("search: %s %q registered with a nil constructor", r.kind, name))
	}
	r.order = append(r.order, name)
	r.byName[name] = v
}

func (r *registry[T]) lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.byName[name]
	return v, ok
}

func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}
