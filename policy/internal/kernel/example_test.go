package kernel_test

import (
	"fmt"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
)

// A Linear layer y = x·Wᵀ over a batch of two rows, with W stored [out, in]
// as in PyTorch. Each row of y is bit-identical to the product of that row
// alone, whatever the batch.
func ExampleMatMulNT() {
	const batch, in, out = 2, 3, 2
	x := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	w := []float32{
		1, 0, 1, // output 0 = x0 + x2
		0, 1, 0, // output 1 = x1
	}
	y := make([]float32, batch*out)
	// A product this small runs on its caller: no team (nil) needed.
	kernel.MatMulNT(nil, y, x, w, batch, out, in, false)
	fmt.Println(y)

	row := make([]float32, out)
	kernel.MatMulNT(nil, row, x[in:], w, 1, out, in, false)
	fmt.Println(row[0] == y[2] && row[1] == y[3])
	// Output:
	// [4 2 10 5]
	// true
}

// The backward products of the same layer: dX = dY·W and dW = dYᵀ·X.
func ExampleMatMulNN() {
	const batch, in, out = 2, 3, 2
	x := []float32{1, 2, 3, 4, 5, 6}
	w := []float32{1, 0, 1, 0, 1, 0}
	dy := []float32{1, 0, 0, 1}

	dx := make([]float32, batch*in)
	kernel.MatMulNN(nil, dx, dy, w, batch, in, out, false)
	dw := make([]float32, out*in)
	kernel.MatMulTN(nil, dw, dy, x, out, in, batch, false)
	fmt.Println(dx)
	fmt.Println(dw)
	// Output:
	// [1 0 1 0 1 0]
	// [1 2 3 4 5 6]
}
