package policy

// AttentionState is implemented by decoding states that record how much
// attention each position receives from the positions after it (the
// Engine's do), for fork rules that branch where later tokens look most
// (AttnRL).
type AttentionState interface {
	// AttentionReceived returns, for every position p run through the
	// model so far (prompt included), Σ_j mean over layers and heads of
	// the softmax weight of the query at j on the key at p, over the
	// positions j > p after the prompt that this state itself ran through
	// the model: not prefill rows, and not a parent's rows (a fork starts
	// with none, since its parent's later rows are not in its sequence).
	// The slice is the state's own and changes with its next steps: copy
	// it to keep it.
	AttentionReceived() []float32
}

// AttentionReceived implements AttentionState.
func (s *state) AttentionReceived() []float32 {
	if s.seg == nil {
		return nil
	}
	return s.seg.recv[:s.seg.n]
}

// receive adds the attention weights scores (one row of pos+1 weights per
// head, one layer) of a row after the prompt to the received attention of
// the positions before it, each head and layer weighing 1/(heads·layers).
// A state runs at most one such row per pass, so no two goroutines add to
// one segment.
func (r row) receive(scores []float32, c Config) {
	if r.pos < r.st.promptLen {
		return
	}
	n := r.pos + 1
	w := 1 / float32(c.Heads*c.Layers)
	recv := r.st.seg.recv
	for h := 0; h < c.Heads; h++ {
		row := scores[h*n : h*n+r.pos]
		for t, a := range row {
			recv[t] += float32(w * a)
		}
	}
}
