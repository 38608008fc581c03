package search_test

import (
	"errors"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// Parameter errors are typed: the strategy, the key and the value given,
// so a config loader can place them without parsing the message.
func TestNewStrategyParamErrors(t *testing.T) {
	for _, tc := range []struct {
		name               string
		params             map[string]string
		strategy, key, val string
	}{
		{"flat", map[string]string{"m": "2"}, "flat", "m", "2"},
		{"flat", map[string]string{"n": "x"}, "flat", "n", "x"},
		{"flat", map[string]string{"n": "0"}, "flat", "n", "0"},
		{"random_tree", map[string]string{"score": "entropy"}, "random_tree", "score", "entropy"},
		{"entropy_tree", map[string]string{"score": "vibes"}, "entropy_tree", "score", "vibes"},
		{"entropy_tree", map[string]string{"l": "-1"}, "entropy_tree", "l", "-1"},
		{"segment_tree", map[string]string{"b": "1"}, "segment_tree", "b", "1"},
	} {
		_, err := search.NewStrategy(tc.name, tc.params)
		var pe *search.ParamError
		if !errors.As(err, &pe) || pe.Strategy != tc.strategy || pe.Key != tc.key || pe.Value != tc.val {
			t.Errorf("%s %v: error %v (%+v), want a ParamError on %s = %s", tc.name, tc.params, err, pe, tc.key, tc.val)
		}
	}
	var pe *search.ParamError
	if _, err := search.NewStrategy("beam", nil); err == nil || errors.As(err, &pe) {
		t.Errorf("unknown strategy: %v, want an error that is not about a parameter", err)
	}
}
