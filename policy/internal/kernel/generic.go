package kernel

// genericImpl is the pure-Go implementation, used where the CPU has no
// supported SIMD and as the reference the SIMD paths are tested against.
var genericImpl = &impl{
	name:  "generic",
	nt:    ntGeneric,
	nn:    nnGeneric,
	tn:    tnGeneric,
	dot:   dotGeneric,
	axpy:  axpyGeneric,
	scale: scaleGeneric,

	siluMul: siluMulGeneric,
	exp:     expSliceGeneric,
	sigmoid: sigmoidGeneric,
	ntI8:    ntI8Generic,
	quant:   quantRowsGeneric,
}

// The generic NT product computes every output with the 16-lane dot
// product of the package documentation, its fused multiply-adds done by
// fma32: the bits of the SIMD paths, on every architecture. The old value
// is added last with acc.

// dotGeneric is the 16-lane dot product of one output.
func dotGeneric(x, y []float32) float32 {
	y = y[:len(x)]
	var s [lanes]float32
	k := len(x)
	p := 0
	for ; p+lanes <= k; p += lanes {
		xs, ys := x[p:p+lanes:p+lanes], y[p:p+lanes:p+lanes]
		for l := range lanes {
			f, ok := fmaFast(xs[l], ys[l], s[l])
			if !ok {
				f = fma32(xs[l], ys[l], s[l])
			}
			s[l] = f
		}
	}
	if p < k {
		l := 0
		for ; p < k; p, l = p+1, l+1 {
			s[l] = fma32(x[p], y[p], s[l])
		}
		for ; l < lanes; l++ {
			s[l] += 0
		}
	}
	return reduce16(&s)
}

// put stores the sum v of an output, or adds it to the old value with acc.
func put(c []float32, j int, v float32, acc bool) {
	if acc {
		c[j] += v
	} else {
		c[j] = v
	}
}

func ntGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	for i := range m {
		ai, ci := a[i*lda:i*lda+k], c[i*ldc:i*ldc+n]
		for j := range n {
			put(ci, j, dotGeneric(ai, b[j*ldb:j*ldb+k]), acc)
		}
	}
}

// nnGeneric and tnGeneric sum every output sequentially over k with one
// fused multiply-add a step, as the SIMD NN and TN products do:
// c[i][j] = fma(a[i][p], b[p][j], c[i][j]) for increasing p, from +0 or from
// the old value with acc, one row of c at a time (axpyGeneric).
func nnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if !acc {
			clear(ci)
		}
		for p, av := range a[i*lda : i*lda+k] {
			axpyGeneric(av, b[p*ldb:p*ldb+n], ci)
		}
	}
}

func tnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if !acc {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	for p := range k {
		bp := b[p*ldb : p*ldb+n]
		for i, av := range a[p*lda : p*lda+m] {
			axpyGeneric(av, bp, c[i*ldc:i*ldc+n])
		}
	}
}

// axpyGeneric sets y[i] = fma(alpha, x[i], y[i]), as the SIMD axpy does.
func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		f, ok := fmaFast(alpha, v, y[i])
		if !ok {
			f = fma32(alpha, v, y[i])
		}
		y[i] = f
	}
}

func scaleGeneric(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// reduce16 sums 16 lanes with the fixed tree: l+8 onto l, l+4, l+2, l+1.
func reduce16(s *[lanes]float32) float32 {
	for w := lanes / 2; w >= 1; w /= 2 {
		for l := range w {
			s[l] += s[l+w]
		}
	}
	return s[0]
}

// dotI8Generic is the 16-lane dot product of the package documentation
// with int8 y, converted exactly to float32.
func dotI8Generic(x []float32, y []int8) float32 {
	var s [lanes]float32
	n := len(x)
	y = y[:n]
	p := 0
	for ; p+lanes <= n; p += lanes {
		xs, ys := x[p:p+lanes:p+lanes], y[p:p+lanes:p+lanes]
		for l := range lanes {
			y := float32(ys[l])
			f, ok := fmaFast(xs[l], y, s[l])
			if !ok {
				f = fma32(xs[l], y, s[l])
			}
			s[l] = f
		}
	}
	if p < n {
		l := 0
		for ; p < n; p, l = p+1, l+1 {
			s[l] = fma32(x[p], float32(y[p]), s[l])
		}
		for ; l < lanes; l++ {
			s[l] += 0
		}
	}
	return reduce16(&s)
}

func ntI8Generic(c []float32, ldc int, a []float32, lda int, q []int8, ldq int, scale []float32, m, n, k int, acc bool) {
	for i := range m {
		ai := a[i*lda : i*lda+k]
		ci := c[i*ldc : i*ldc+n]
		for j := range n {
			d := float32(dotI8Generic(ai, q[j*ldq:j*ldq+k]) * scale[j])
			if acc {
				ci[j] += d
			} else {
				ci[j] = d
			}
		}
	}
}
