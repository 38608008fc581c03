package search_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// Registering an empty name, a taken name or a nil constructor is a
// programming error: it panics naming the registry and the name, and
// leaves the registry as it was.
func TestRegisterRefuses(t *testing.T) {
	newFlat := func(p *search.Params) (search.Strategy, error) { return search.Flat{N: p.Int("n", 1)}, nil }
	for _, tc := range []struct {
		name     string
		register func()
		want     string
	}{
		{"strategy taken", func() { search.RegisterStrategy("flat", newFlat) }, `strategy "flat" registered twice`},
		{"strategy empty", func() { search.RegisterStrategy("", newFlat) }, "register strategy with an empty name"},
		{"strategy nil", func() { search.RegisterStrategy("nil_strategy", nil) }, `strategy "nil_strategy" registered with a nil constructor`},
		{"estimator taken", func() { search.RegisterEstimator("grpo", func() search.Estimator { return search.RLOO{} }) }, `advantage estimator "grpo" registered twice`},
		{"estimator nil", func() { search.RegisterEstimator("nil_estimator", nil) }, `advantage estimator "nil_estimator" registered with a nil constructor`},
		{"fork score taken", func() {
			search.RegisterForkScore(search.ScoreRandom, func(*search.Node, int, search.ForkStream) float64 { return 0 })
		}, `fork score "random" registered twice`},
		{"fork score nil", func() { search.RegisterForkScore("nil_score", nil) }, `fork score "nil_score" registered with a nil constructor`},
	} {
		strategies, estimators, scores := search.Names(), search.EstimatorNames(), search.ForkScores()
		got := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			tc.register()
			return ""
		}()
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: panic %q, want one containing %q", tc.name, got, tc.want)
		}
		if !slices.Equal(strategies, search.Names()) || !slices.Equal(estimators, search.EstimatorNames()) || !slices.Equal(scores, search.ForkScores()) {
			t.Errorf("%s: the registries changed", tc.name)
		}
	}
}

// Every registered strategy states its shape consistently with what it
// generates: no group of its defaults has more leaves than Leaves() or
// costs more than MaxGroupTokens, and a remote form, where there is one,
// has the same leaves and bound.
func TestRegisteredShapes(t *testing.T) {
	const maxTokens = 10
	for _, name := range search.Names() {
		st, err := search.NewStrategy(name, nil)
		if err != nil {
			t.Fatalf("%s with its defaults: %v", name, err)
		}
		bound, err := search.MaxGroupTokens(st, maxTokens, 0)
		if err != nil {
			t.Fatal(err)
		}
		req := request(newSampler(t, hashDist(0.2, 0)), prompts(2), maxTokens)
		groups, err := st.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, g := range groups {
			if len(g.Leaves()) > st.Leaves() || g.Usage.GeneratedTokens > bound || g.Strategy != name {
				t.Errorf("%s: group %q of %d leaves, %d tokens; stated %d leaves, bound %d", name, g.Strategy, len(g.Leaves()), g.Usage.GeneratedTokens, st.Leaves(), bound)
			}
			// A local group's nodes hold every token it generated, EOS
			// included: nothing unheld.
			held := 0
			for _, n := range g.Nodes() {
				held += len(n.Tokens)
			}
			if int64(held) != g.Usage.GeneratedTokens || g.Usage.UnheldTokens != 0 {
				t.Errorf("%s: %d tokens generated, %d held by the nodes, %d unheld", name, g.Usage.GeneratedTokens, held, g.Usage.UnheldTokens)
			}
		}
		if r, ok := st.(search.Remote); ok {
			e, err := r.RemoteTree()
			if err != nil || e.Leaves() != st.Leaves() || e.MaxGroupTokens(maxTokens) != st.MaxGroupTokens(maxTokens) {
				t.Errorf("%s: remote form %+v, %v: %d leaves, bound %d; want %d and %d", name, e, err, e.Leaves(), e.MaxGroupTokens(maxTokens), st.Leaves(), st.MaxGroupTokens(maxTokens))
			}
		}
	}
}
