package reward

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/mat"
)

// Loss returns the mean binary cross-entropy of the reward model on a batch
// of token sequences with their labels (1: correct), as a differentiable
// scalar, and the logit of each sequence. The scalar head and the loss are
// one spago autograd function over the body's hidden states; its backward
// pass sends gradient into the last row of each sequence only, and into
// score.weight and score.bias.
func (m *Model) Loss(seqs [][]int, labels []bool) (mat.Tensor, []float64, error) {
	if len(seqs) != len(labels) {
		return nil, nil, fmt.Errorf("reward loss: %d sequences, %d labels", len(seqs), len(labels))
	}
	h, err := m.newHead(seqs)
	if err != nil {
		return nil, nil, fmt.Errorf("reward loss: %w", err)
	}
	f := &headBCE{head: h, y: make([]float32, len(seqs))}
	for i, l := range labels {
		if l {
			f.y[i] = 1
		}
	}
	return h.run(f)
}

// headBCE is loss = mean_i BCE(σ(z_i), y_i) with z_i = w·h[rows[i]] + b:
// the scalar head and binary cross-entropy in one autograd function.
type headBCE struct {
	*head
	y []float32 // labels, 0 or 1
}

func (f *headBCE) Forward() (mat.Tensor, error) {
	f.logits()
	var sum float64
	for i, z := range f.z {
		sum += bce(float64(z), float64(f.y[i]))
	}
	return mat.Scalar(float32(sum / float64(len(f.rows)))), nil
}

// bce is −[y log σ(z) + (1−y) log(1−σ(z))] = max(z, 0) − y·z + log(1+e^−|z|),
// computed without overflow.
func bce(z, y float64) float64 {
	return math.Max(z, 0) - float64(y*z) + math.Log1p(math.Exp(-math.Abs(z)))
}

func (f *headBCE) Backward(gy mat.Tensor) error {
	g := mat.Data[float32](gy.Value())[0] / float32(len(f.rows))
	dz := make([]float32, len(f.z))
	for i, z := range f.z {
		dz[i] = float32(g * (float32(Sigmoid(float64(z))) - f.y[i]))
	}
	f.backward(dz)
	return nil
}
