package rl

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
)

// snapshot is everything a run needs to continue exactly: the policy's
// weights, the optimizer's state, the counters that select prompts and
// random streams, and the stale-rollout buffer.
type snapshot struct {
	Weights    []byte // safetensors
	Optimizer  []byte
	Step       int
	NextPrompt int
	TokensCum  int64
	// TrainFLOPsCum is budget/train_flops_cum (0 in snapshots older than
	// it).
	TrainFLOPsCum int64
	// FLOPsCum is budget/total_flops_cum (0 in snapshots older than it).
	FLOPsCum int64
	Buffer   []bufferedGroup
	// Passes are rollout.adaptive's pass counts by prompt text (none
	// without it, and in snapshots older than it).
	Passes []promptPasses
	// Versions are, with train.async k, the policy versions the steps
	// after this one sample from besides the current weights (max(0,
	// Step−k) to Step−1); none in synchronous runs and in snapshots older
	// than it.
	Versions []versionWeights
	// BoundFLOPs is, with train.async, the per-leaf cost of the updates
	// so far (the sampler's view of update FLOPs; see async.go).
	BoundFLOPs int64
}

// bufferedGroup is a stale group as its binary record (package record),
// which keeps the prompt's text, and the policy version that sampled it.
type bufferedGroup struct {
	Group   []byte
	Version int
}

// Snapshot encodes the run's state after its last step.
func (l *Loop) Snapshot() ([]byte, error) {
	w, err := policy.EncodeWeights(l.s.Policy)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	o, err := l.trainer.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := snapshot{Weights: w, Optimizer: o, Step: l.step, NextPrompt: l.nextPrompt, TokensCum: l.tokensCum, TrainFLOPsCum: l.trainFLOPsCum, FLOPsCum: l.flopsCum, Passes: l.adaptive.snapshot()}
	for _, b := range l.buffer {
		rec, err := b.group.Record(b.prompt.Text, l.s.Tokenizer.ResponseText).AppendBinary(nil)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		s.Buffer = append(s.Buffer, bufferedGroup{Group: rec, Version: b.version})
	}
	if l.async != nil {
		if s.Versions, err = l.async.snapshotVersions(); err != nil {
			return nil, err
		}
		s.BoundFLOPs = l.async.boundCum
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// Restore sets the run's state from a Snapshot of a run with the same
// setup; the policy's weights are overwritten in place.
func (l *Loop) Restore(b []byte) error {
	var s snapshot
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := l.s.Policy.SetWeights(s.Weights); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := l.trainer.UnmarshalState(s.Optimizer); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	l.step, l.nextPrompt, l.tokensCum, l.trainFLOPsCum, l.flopsCum = s.Step, s.NextPrompt, s.TokensCum, s.TrainFLOPsCum, s.FLOPsCum
	l.adaptive.restore(s.Passes)
	l.buffer = l.buffer[:0]
	for _, bg := range s.Buffer {
		var rec record.Group
		if err := record.Decode(bg.Group, &rec); err != nil {
			return fmt.Errorf("restore: buffered group: %w", err)
		}
		g, err := search.FromRecord(&rec)
		if err != nil {
			return fmt.Errorf("restore: buffered group: %w", err)
		}
		p, err := l.s.Task.ParsePrompt(rec.Prompt)
		if err != nil {
			return fmt.Errorf("restore: buffered prompt: %w", err)
		}
		l.buffer = append(l.buffer, staleGroup{group: g, prompt: p, version: bg.Version})
	}
	if l.async != nil {
		return l.async.restore(s.Step, s.Versions, s.BoundFLOPs)
	}
	return nil
}
