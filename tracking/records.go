package tracking

import (
	"fmt"
	"math"
	"time"
)

// Experiment is a named set of runs made from one configuration file: its
// variants, each with one resolved configuration, run under any seeds.
type Experiment struct {
	// Name identifies the experiment in the store.
	Name string `json:"name"`
	// Config is the configuration text the experiment was made from.
	Config string `json:"config"`
	// Variants lists the variant names in configuration order; the first is
	// the default baseline of reports. It may be empty (then names sort).
	Variants []string `json:"variants,omitempty"`
	// Configs maps each variant's name to its resolved configuration text
	// (as Run.Config holds it): an experiment name in a store stands for
	// one set of variant configs. Records written before configs were kept
	// have none; PutExperiment fills them from the experiment's runs.
	Configs map[string]string `json:"variant_configs,omitempty"`
	// Baseline is the variant reports compare against by default (the
	// config's baseline:); empty means the first of Variants.
	Baseline string `json:"baseline,omitempty"`
	// Created is when the experiment was first put in the store.
	Created time.Time `json:"created"`
}

// RunStatus is the life-cycle state of a run.
type RunStatus string

// The states of a run.
const (
	StatusRunning  RunStatus = "running"
	StatusFinished RunStatus = "finished"
	StatusFailed   RunStatus = "failed"
)

// Valid reports whether s is one of the defined states.
func (s RunStatus) Valid() bool {
	return s == StatusRunning || s == StatusFinished || s == StatusFailed
}

// rank orders states for merging: a finished run beats a failed one, which
// beats one still running.
func (s RunStatus) rank() int {
	switch s {
	case StatusFinished:
		return 2
	case StatusFailed:
		return 1
	}
	return 0
}

// Run is one training run: a variant of an experiment under one seed.
type Run struct {
	// ID is the caller's hash of the resolved config and seed.
	ID         string `json:"id"`
	Experiment string `json:"experiment"`
	Variant    string `json:"variant"`
	Seed       int64  `json:"seed"`
	// Config is the fully resolved configuration text of the run.
	Config string `json:"config"`
	// Version is the module version of the program that made the run.
	Version string    `json:"version"`
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	// End is zero while the run is running.
	End    time.Time `json:"end,omitzero"`
	Status RunStatus `json:"status"`
	// Error says why a failed run failed.
	Error string `json:"error,omitempty"`
	// LastStep is the last committed step, −1 when none is.
	LastStep int `json:"last_step"`
	// TotalSteps is the planned number of steps, 0 when unknown; it lets a
	// listing show progress.
	TotalSteps int `json:"total_steps,omitempty"`
	// Tokens is the cumulative sampled-token count at LastStep.
	Tokens int64 `json:"tokens"`
	// Elapsed is the cumulative wall time at LastStep.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Resumes counts how many times the run was reopened after a stop.
	Resumes int `json:"resumes,omitempty"`
}

// StepRecord is everything one training step commits, in one transaction.
type StepRecord struct {
	// Step is the step index (≥ 0); steps of a run must increase.
	Step int
	// Tokens is the cumulative number of sampled tokens at the end of the step.
	Tokens int64
	// Elapsed is the cumulative wall time of the run at the end of the step.
	Elapsed time.Duration
	// Metrics maps metric names (e.g. "reward/mean") to values.
	Metrics map[string]float64
	// Groups are the rollout groups of the step, filtered ones included.
	Groups []Group
	// Checkpoint, when not empty, is saved as the run's checkpoint at Step.
	Checkpoint []Blob
}

// StepMetrics is the metric record of one step as read back.
type StepMetrics struct {
	Step    int
	Tokens  int64
	Elapsed time.Duration
	Values  map[string]float64
}

// Blob is a named opaque byte payload of a checkpoint (e.g. "model",
// "optimizer", "rng").
type Blob struct {
	Name string
	Data []byte
}

// Group is one rollout group: the responses to one prompt at one step,
// as a forest of trees (a flat group is a set of single-node trees). Its
// JSON form is the one `rollout sample --json` prints.
type Group struct {
	Prompt   string `json:"prompt"`
	Strategy string `json:"strategy"`
	Budget   Budget `json:"budget"`
	// Filtered is true when the group was dropped from the update (e.g. all
	// rewards equal under dynamic sampling).
	Filtered bool   `json:"filtered"`
	Nodes    []Node `json:"nodes"`
	Leaves   []Leaf `json:"leaves"`
}

// Budget is the exact compute a group used.
type Budget struct {
	// Limit is the per-prompt token budget, 0 when none.
	Limit           int64 `json:"limit"`
	GeneratedTokens int64 `json:"generated_tokens"`
	PrefillTokens   int64 `json:"prefill_tokens"`
	FLOPs           int64 `json:"flops"`
}

// Node is a segment of a rollout tree between forks.
type Node struct {
	ID int `json:"id"`
	// Parent is the parent node's ID, −1 for a root.
	Parent int `json:"parent"`
	// ForkAt is the index in the parent's Tokens where this node's first
	// token replaces the parent's (0 for a root).
	ForkAt    int       `json:"fork_at"`
	Iteration int       `json:"iteration"`
	Tokens    []int     `json:"tokens"`
	LogProbs  []float32 `json:"logprobs"`
	Entropies []float32 `json:"entropies"`
}

// Leaf is a finished response: the path from its tree's root to Node.
type Leaf struct {
	Node   int     `json:"node"`
	Text   string  `json:"text"`
	Reward float64 `json:"reward"`
	Reason string  `json:"reason"`
	// Advantages holds one value per token of the whole root-to-leaf path.
	Advantages []float32 `json:"advantages"`
}

// Path returns the tokens, log-probabilities and entropies of the response
// that ends at leaf l, concatenated from its tree's root, appending to the
// given slices (which may be nil) so callers can reuse memory.
func (g *Group) Path(l Leaf, tokens []int, logprobs, entropies []float32) ([]int, []float32, []float32, error) {
	var chainBuf [16]int
	chain := chainBuf[:0]
	for id, guard := l.Node, 0; id != -1; guard++ {
		if guard > len(g.Nodes) {
			return nil, nil, nil, fmt.Errorf("leaf node %d: parent links form a cycle", l.Node)
		}
		i := g.nodeIndex(id)
		if i < 0 {
			return nil, nil, nil, fmt.Errorf("leaf node %d: no node %d in group", l.Node, id)
		}
		chain = append(chain, i)
		id = g.Nodes[i].Parent
	}
	for k := len(chain) - 1; k >= 0; k-- {
		n := &g.Nodes[chain[k]]
		end := len(n.Tokens)
		if k > 0 {
			end = g.Nodes[chain[k-1]].ForkAt
			if end < 0 || end > len(n.Tokens) {
				return nil, nil, nil, fmt.Errorf("node %d forks at %d, but its parent %d has %d tokens", g.Nodes[chain[k-1]].ID, end, n.ID, len(n.Tokens))
			}
		}
		tokens = append(tokens, n.Tokens[:end]...)
		logprobs = appendPadded(logprobs, n.LogProbs, end)
		entropies = appendPadded(entropies, n.Entropies, end)
	}
	return tokens, logprobs, entropies, nil
}

// appendPadded appends src[:n], padding with NaN where src is shorter.
func appendPadded(dst, src []float32, n int) []float32 {
	if len(src) >= n {
		return append(dst, src[:n]...)
	}
	dst = append(dst, src...)
	for i := len(src); i < n; i++ {
		dst = append(dst, math.Float32frombits(0x7fc00000)) // NaN
	}
	return dst
}

// nodeIndex returns the index of the node with the given ID, −1 if none.
func (g *Group) nodeIndex(id int) int {
	if id >= 0 && id < len(g.Nodes) && g.Nodes[id].ID == id {
		return id
	}
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}

// Validate checks the group's structure: unique node IDs, parents that
// exist and form no cycle, fork positions within the parent's tokens,
// per-token arrays as long as the tokens (or empty), leaves on existing
// nodes with one advantage per path token (or none).
func (g *Group) Validate() error {
	index := make(map[int]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if _, dup := index[n.ID]; dup {
			return fmt.Errorf("node id %d appears twice", n.ID)
		}
		index[n.ID] = i
	}
	depth := make([]int, len(g.Nodes)) // 0 unknown, −1 visiting
	var pathLen func(i int) (int, error)
	pathLen = func(i int) (int, error) {
		switch depth[i] {
		case -1:
			return 0, fmt.Errorf("node %d: parent links form a cycle", g.Nodes[i].ID)
		case 0:
		default:
			return depth[i] - 1, nil
		}
		n := &g.Nodes[i]
		if len(n.LogProbs) != 0 && len(n.LogProbs) != len(n.Tokens) || len(n.Entropies) != 0 && len(n.Entropies) != len(n.Tokens) {
			return 0, fmt.Errorf("node %d: %d tokens, %d logprobs, %d entropies", n.ID, len(n.Tokens), len(n.LogProbs), len(n.Entropies))
		}
		if n.Parent == -1 {
			if n.ForkAt != 0 {
				return 0, fmt.Errorf("node %d: a root with fork_at %d", n.ID, n.ForkAt)
			}
			depth[i] = len(n.Tokens) + 1
			return len(n.Tokens), nil
		}
		p, ok := index[n.Parent]
		if !ok {
			return 0, fmt.Errorf("node %d: parent %d is not in the group", n.ID, n.Parent)
		}
		if n.ForkAt < 0 || n.ForkAt > len(g.Nodes[p].Tokens) {
			return 0, fmt.Errorf("node %d: fork_at %d outside its parent %d's %d tokens", n.ID, n.ForkAt, n.Parent, len(g.Nodes[p].Tokens))
		}
		depth[i] = -1
		parentLen, err := pathLen(p)
		if err != nil {
			return 0, err
		}
		// The parent's own tokens after the fork are not on this path.
		l := parentLen - len(g.Nodes[p].Tokens) + n.ForkAt + len(n.Tokens)
		depth[i] = l + 1
		return l, nil
	}
	for i := range g.Nodes {
		if _, err := pathLen(i); err != nil {
			return err
		}
	}
	for j, l := range g.Leaves {
		i, ok := index[l.Node]
		if !ok {
			return fmt.Errorf("leaf %d: node %d is not in the group", j, l.Node)
		}
		if n := depth[i] - 1; len(l.Advantages) != 0 && len(l.Advantages) != n {
			return fmt.Errorf("leaf %d: %d advantages for a path of %d tokens", j, len(l.Advantages), n)
		}
	}
	return nil
}
