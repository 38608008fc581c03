package rl_test

import (
	"fmt"

	"github.com/rollout-rl/rollout/experiments/rl"
)

// pass@k from n samples of which c are correct, by the unbiased estimator.
func ExamplePassAtK() {
	fmt.Printf("%.4f\n", rl.PassAtK(8, 2, 4)) // 1 − C(6,4)/C(8,4)
	// Output: 0.7857
}
