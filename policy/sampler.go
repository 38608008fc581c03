package policy

// Sampler is what rollout search needs from a policy: start decoding states
// from prompts, fork them, and advance a batch of them by one sampled token
// each. The float32 transformer (Engine), its int8 copy and, later, a remote
// inference server all stand behind it.
//
// A State is a decoding position: the tokens so far and, ready, the
// distribution of the next token. Step samples one token per state from that
// distribution and makes the state's next distribution ready; the forward
// pass for a sampled token is computed lazily, on the next Step, so a token
// after which nothing is sampled (an end of sequence) costs no forward
// position.
type Sampler interface {
	// Prefill runs the prompt through the model and returns a state whose
	// next-token distribution is ready. Sampling randomness for the state
	// comes from stream (see Stream).
	Prefill(prompt []int, stream Stream) (State, error)
	// Step samples one token for every state, with the given sampling
	// settings, and writes the results to out (len(out) == len(states)).
	// All states advance in one batched forward pass. What a state samples
	// depends only on its own tokens, its stream and cfg, never on the other
	// states of the batch.
	Step(states []State, cfg Sampling, out []Token) error
	// Counters reports the forward positions computed so far.
	Counters() Counters
}

// State is one decoding state of a Sampler. States are not safe for
// concurrent use; a state may be in one Step call at a time.
type State interface {
	// Tokens returns the state's tokens: the prompt and all sampled tokens.
	// The slice must not be modified.
	Tokens() []int
	// PromptLen is the number of prompt tokens at the start of Tokens.
	PromptLen() int
	// Fork returns a new state that shares Tokens()[:at] (and their KV
	// cache) with this one and whose next token, at position at, is sampled
	// anew from stream. PromptLen() <= at <= len(Tokens()). It costs no
	// forward position (Engine copies the shared cache: memory traffic
	// proportional to at, no model computation).
	Fork(at int, stream Stream) (State, error)
	// Release tells the sampler the state will not be used again, so its
	// cache memory can be reused (by Engine at once: its forks hold copies).
	Release()
}

// Token is the outcome of one sampling step of one state.
type Token struct {
	ID int
	// LogProb is log p(ID) under the sampling distribution (after
	// temperature, top-k and top-p).
	LogProb float32
	// Entropy is -Σ p log p of the sampling distribution, in nats.
	Entropy float32
}

// Sampling selects how the next token is drawn from the model's logits:
// logits / Temperature, then top-k, then top-p (nucleus). Temperature 0
// means greedy (the arg max; LogProb and Entropy are then 0).
type Sampling struct {
	Temperature float64 // > 0, or 0 for greedy
	TopK        int     // 0: off
	TopP        float64 // in (0, 1]; 1 (or 0): off
}

// DefaultSampling is plain multinomial sampling at temperature 1.
var DefaultSampling = Sampling{Temperature: 1, TopP: 1}

// Stream names a counter-based random stream: the uniform number used to
// sample the token at position p of a state is a pure function of
// (Stream, p). Streams are derived from (seed, step, prompt, branch) by the
// caller, so results do not depend on batching or scheduling.
type Stream struct {
	Seed uint64
	ID   uint64
}

// Counters counts what a Sampler computed. Generated tokens, as the token
// budget counts them, are SampledTokens: every sampled token is one
// generated position. DecodeTokens is smaller by the tokens after which
// nothing was sampled (a finished response's last token is never fed back).
type Counters struct {
	PrefillTokens int64 // prompt positions run through the model
	DecodeTokens  int64 // sampled tokens fed back through the model
	SampledTokens int64 // tokens sampled (forks included)
}
