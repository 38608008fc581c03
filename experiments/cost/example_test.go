package cost_test

import (
	"fmt"

	"github.com/rollout-rl/rollout/experiments/cost"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
)

// One step of the tiny model: 8 prompts, 64 responses of 128 tokens.
// Decoding reads the KV cache at every token (4 FLOPs a byte); on a
// roofline machine of 10 FLOPs a byte it is bound by memory and the
// update (35) by compute.
func ExampleStep_Work() {
	tiny, _ := policy.Size("tiny")
	tiny.MaxSeq = 160
	s := cost.Step{Model: tiny, Prompts: 8, Batch: 64, PromptLen: 16, Response: 128, Train: rl.DefaultConfig()}
	for p, w := range s.Work() {
		fmt.Printf("%-7s %6.1f GFLOP %4.0f FLOP/byte\n", cost.Phase(p), w.FLOPs/1e9, w.Intensity())
	}
	fmt.Printf("generation share at 10 FLOP/byte: %.0f%%\n", 100*cost.RooflineShare(s, 10))
	// Output:
	// prefill    0.2 GFLOP   23 FLOP/byte
	// decode    15.3 GFLOP    4 FLOP/byte
	// score     17.2 GFLOP   35 FLOP/byte
	// update    51.7 GFLOP   35 FLOP/byte
	// generation share at 10 FLOP/byte: 34%
}
