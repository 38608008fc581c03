package policy

import (
	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"github.com/rollout-rl/rollout/policy/team"
)

// products runs the matrix products of the linear layers of the
// differentiable forward and backward passes: in float32, or, when bf16 is
// set and the CPU has AVX512_BF16, with operands rounded to bfloat16 and
// float32 accumulation (see Model.SetBF16Training). The per-head attention
// products stay float32 either way.
type products struct {
	bf16 bool
	pool *bufPool   // scratch of the BF16 products
	team *team.Team // splits the large products
}

// native reports whether the BF16 products run.
func (p products) native() bool { return p.bf16 && kernel.HasBF16() }

// nt is kernel.MatMulNT or its BF16 form.
func (p products) nt(c, a, b []float32, m, n, k int, acc bool) {
	if !p.native() {
		kernel.MatMulNT(p.team, c, a, b, m, n, k, acc)
		return
	}
	s := p.pool.get(kernel.BF16Scratch(m, n, k))
	kernel.MatMulNTBF16(p.team, c, a, b, m, n, k, acc, s)
	p.pool.put(s)
}

// nn is kernel.MatMulNN or its BF16 form.
func (p products) nn(c, a, b []float32, m, n, k int, acc bool) {
	if !p.native() {
		kernel.MatMulNN(p.team, c, a, b, m, n, k, acc)
		return
	}
	s := p.pool.get(kernel.BF16Scratch(m, n, k))
	kernel.MatMulNNBF16(p.team, c, a, b, m, n, k, acc, s)
	p.pool.put(s)
}

// tn is kernel.MatMulTN or its BF16 form.
func (p products) tn(c, a, b []float32, m, n, k int, acc bool) {
	if !p.native() {
		kernel.MatMulTN(p.team, c, a, b, m, n, k, acc)
		return
	}
	s := p.pool.get(kernel.BF16Scratch(m, n, k))
	kernel.MatMulTNBF16(p.team, c, a, b, m, n, k, acc, s)
	p.pool.put(s)
}

// BF16Supported reports whether this CPU runs the BF16 training products
// (AVX512_BF16 with an AVX-512 kernel implementation active); where it
// does not, a model set to train in BF16 trains in float32.
func BF16Supported() bool { return kernel.HasBF16() }

// SetBF16Training makes the model's differentiable passes (Logits, Hidden
// and what is built on them, so training) compute the linear layers'
// matrix products with operands rounded to bfloat16 and float32
// accumulation, where the CPU supports it (BF16Supported): about twice
// the multiply-adds per instruction, at bfloat16's 8 significant bits per
// operand. The default is float32. The sampling engine is not affected.
// Results stay independent of the number of goroutines, but differ from
// float32 training's. Not safe to call while a pass runs.
func (m *Model) SetBF16Training(on bool) { m.bf16 = on }

// SetFlushSubnormals makes the backward pass of the softmax over the
// vocabulary (the losses built on TokenLogProbs and NLLLoss) set the
// gradient's subnormal values (magnitude below 2^-126) to zero. A trained
// model predicts many tokens with probabilities that small, and this
// CPU's matrix products slow down up to a hundredfold on subnormal
// operands (results/performance.md, "What W3 does not measure"); the
// flushed values are below a float32 ulp of any normal gradient they are
// summed with, so they almost never change a result, but they can, so the
// default is off and a result trained with it on is its own result. The
// flush is plain Go before the products, the same on every CPU and kernel
// path. Not safe to call while a pass runs.
func (m *Model) SetFlushSubnormals(on bool) { m.flush = on }

// FlushSubnormals reports whether SetFlushSubnormals is on.
func (m *Model) FlushSubnormals() bool { return m.flush }

// BF16Training reports whether SetBF16Training is on.
func (m *Model) BF16Training() bool { return m.bf16 }

// products returns the products of the model's differentiable passes.
func (m *Model) products() products {
	return products{bf16: m.bf16, pool: m.pool, team: m.team}
}

// SetTeam makes the model's differentiable passes (Logits, Hidden, the
// losses built on them, their backward passes and a Trainer's steps) run
// on t, and engines built afterwards sample on t unless given another
// (WithTeam). A new model has its own team, sized from GOMAXPROCS; give the
// models of concurrent runs teams whose sizes add up to the cores (see
// team.Team.Split). A nil t runs every pass on its caller. Which goroutine
// computes what never changes a result. Not safe to call while a pass
// runs.
func (m *Model) SetTeam(t *team.Team) { m.team = t }

// Team returns the team the model's passes run on (see SetTeam).
func (m *Model) Team() *team.Team { return m.team }
