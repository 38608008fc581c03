package policy

import (
	"slices"
	"testing"
)

// The attention a position receives is the state's own: the same decoded
// alone, in a batch with other states, over one worker or several, and a
// fork starts with none (its parent's later rows are not in its
// sequence). Each later row spreads a weight of at most 1 over the
// positions before it, and the last fed position has received none.
func TestAttentionReceived(t *testing.T) {
	m := randomModel(t, testConfig, 5)
	prompt := []int{BOS, 8, 9, SEP}
	cfg := Sampling{Temperature: 1.2}
	decode := func(e *Engine, others int, steps int) (State, []float32) {
		st, _ := e.Prefill(prompt, Stream{Seed: 2, ID: 1})
		batch := []State{st}
		for i := 0; i < others; i++ {
			o, _ := e.Prefill([]int{BOS, 4 + i, SEP}, Stream{Seed: 3, ID: uint64(i)})
			batch = append(batch, o)
		}
		out := make([]Token, len(batch))
		for i := 0; i < steps; i++ {
			if err := e.Step(batch, cfg, out); err != nil {
				t.Fatal(err)
			}
		}
		return st, slices.Clone(st.(AttentionState).AttentionReceived())
	}
	_, alone := decode(NewEngine(m), 0, 10)
	_, batched := decode(NewEngine(m), 5, 10)
	one := NewEngine(m)
	one.workers = 1
	_, serial := decode(one, 5, 10)
	if !slices.Equal(alone, batched) || !slices.Equal(alone, serial) {
		t.Fatalf("attention received depends on the batch or the workers:\n%v\n%v\n%v", alone, batched, serial)
	}
	// 10 steps: the prompt is prefilled, then 9 sampled tokens are fed.
	if len(alone) != len(prompt)+9 {
		t.Fatalf("%d positions, want %d", len(alone), len(prompt)+9)
	}
	sum := float32(0)
	for _, a := range alone {
		if a < 0 {
			t.Fatalf("negative attention %v", alone)
		}
		sum += a
	}
	if rows := float32(9); !(sum > 0 && sum <= rows+1e-4) || alone[len(alone)-1] != 0 {
		t.Errorf("attention received %v: sum %v, want in (0, 9], none on the last fed position", alone, sum)
	}

	e := NewEngine(m)
	parent, _ := decode(e, 0, 6)
	child, err := parent.Fork(len(parent.Tokens())-2, Stream{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := child.(AttentionState).AttentionReceived(); len(got) != len(parent.Tokens())-2 || slices.ContainsFunc(got, func(a float32) bool { return a != 0 }) {
		t.Errorf("fork: %v, want %d zeros", got, len(parent.Tokens())-2)
	}
	child.Release()
	if child.(AttentionState).AttentionReceived() != nil {
		t.Error("a released state reports attention")
	}
}
