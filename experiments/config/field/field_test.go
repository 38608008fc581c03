package field

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestErrorRenders(t *testing.T) {
	for _, tc := range []struct {
		err        *Error
		want, tail string
	}{
		{&Error{Key: "train.lr", Value: -1.0, Msg: "want > 0"}, "train.lr = -1, want > 0", "-1, want > 0"},
		{&Error{Key: "train.lr", Value: 3e-5, Msg: "want > 0"}, "train.lr = 3e-05, want > 0", "3e-05, want > 0"},
		{&Error{Key: "reward.model", Value: math.NaN(), Msg: "want a finite weight ≥ 0"}, "reward.model = NaN, want a finite weight ≥ 0", "NaN, want a finite weight ≥ 0"},
		{&Error{Key: "train.advantage", Value: "ppo", Msg: "want one of grpo"}, `train.advantage = "ppo", want one of grpo`, `"ppo", want one of grpo`},
		{&Error{Key: "eval.k", Value: 5, Msg: "want in [1, 4]"}, "eval.k = 5, want in [1, 4]", "5, want in [1, 4]"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.err.Detail(); got != tc.tail {
			t.Errorf("Detail() = %q, want %q", got, tc.tail)
		}
	}
	var fe *Error
	wrapped := fmt.Errorf("pretrain: %w", &Error{Key: "pretrain.steps", Value: 0, Msg: "want ≥ 1"})
	if !errors.As(wrapped, &fe) || fe.Key != "pretrain.steps" {
		t.Fatalf("errors.As through a wrap: %+v", fe)
	}
}
