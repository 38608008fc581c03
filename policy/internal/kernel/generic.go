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
			s[l] = fma32(xs[l], ys[l], s[l])
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

// The blocked generic NN and TN products (generic_blocked.go) sum every
// output sequentially over k with one fused multiply-add a step, as the
// SIMD NN and TN products do: s = fma32(a[i][p], b[p][j], s) for
// increasing p from +0, or from the old value with acc. Register tiles of
// 2×3 and 1×6 outputs, and single outputs at the edges, all run this
// arithmetic, so an output's bits depend only on its row of a and column of
// b. The tiles are small enough for the compiler to keep the sums in the 15
// usable registers: spilling a sum to memory halves the speed.

// The last columns j..n−1 of a row pair (fewer than a tile's 3) or of a
// single row (fewer than 6) run as one tile over the last 3 or 6 columns
// of the product, on copies of the outputs, and only the columns from j
// are stored: a lone column summed alone waits on its one chain of
// additions and costs about as much as a whole tile. An output's bits do
// not depend on the tile that computes it, so the recomputed columns
// before j, which are dropped, change nothing.

// edge2x3 computes columns j..len(c0)−1 (len(c0) ≥ 3) of rows a0 and a1
// against the rows of b (stride ldb), continuing from the old outputs with
// from (see nt2x3Generic).
func edge2x3(c0, c1, a0, a1, b []float32, ldb, j int, from, acc bool) {
	n := len(c0)
	s := n - 3
	var t0, t1 [3]float32
	copy(t0[:], c0[s:n])
	copy(t1[:], c1[s:n])
	nt2x3Generic(t0[:], t1[:], a0, a1, b[s*ldb:], ldb, from, acc)
	copy(c0[j:n], t0[j-s:])
	copy(c1[j:n], t1[j-s:])
}

// edge1x6 is edge2x3 for the last columns j..len(c0)−1 (len(c0) ≥ 6) of
// the single row a0.
func edge1x6(c0, a0, b []float32, ldb, j int, from, acc bool) {
	n := len(c0)
	s := n - 6
	var t0 [6]float32
	copy(t0[:], c0[s:n])
	nt1x6Generic(t0[:], a0, b[s*ldb:], ldb, from, acc)
	copy(c0[j:n], t0[j-s:])
}

// nt2x3Generic computes the outputs of rows a0, a1 (equal lengths k)
// against the three b rows from b (stride ldb) into c0[0:3] and c1[0:3].
// The sums start from +0, or from the old outputs when from is set (the
// blocked NN and TN products continue a sum over k blocks this way).
func nt2x3Generic(c0, c1, a0, a1, b []float32, ldb int, from, acc bool) {
	k := len(a0)
	a1 = a1[:k]
	b0, b1, b2 := b[:k], b[ldb:ldb+k], b[2*ldb:2*ldb+k]
	b1, b2 = b1[:k], b2[:k] // the lengths the prover needs
	c0, c1 = c0[:3], c1[:3]
	var s00, s01, s02, s10, s11, s12 float32
	if from {
		s00, s01, s02 = c0[0], c0[1], c0[2]
		s10, s11, s12 = c1[0], c1[1], c1[2]
	}
	// Four steps a round: the loop overhead is a tenth of the work (the
	// condition p < k−3 also lets the compiler drop the bounds checks).
	var x, y, v float32
	p := 0
	for ; p < k-3; p += 4 {
		x, y = a0[p], a1[p]
		v = b0[p]
		s00 = fma32(x, v, s00)
		s10 = fma32(y, v, s10)
		v = b1[p]
		s01 = fma32(x, v, s01)
		s11 = fma32(y, v, s11)
		v = b2[p]
		s02 = fma32(x, v, s02)
		s12 = fma32(y, v, s12)
		x, y = a0[p+1], a1[p+1]
		v = b0[p+1]
		s00 = fma32(x, v, s00)
		s10 = fma32(y, v, s10)
		v = b1[p+1]
		s01 = fma32(x, v, s01)
		s11 = fma32(y, v, s11)
		v = b2[p+1]
		s02 = fma32(x, v, s02)
		s12 = fma32(y, v, s12)
		x, y = a0[p+2], a1[p+2]
		v = b0[p+2]
		s00 = fma32(x, v, s00)
		s10 = fma32(y, v, s10)
		v = b1[p+2]
		s01 = fma32(x, v, s01)
		s11 = fma32(y, v, s11)
		v = b2[p+2]
		s02 = fma32(x, v, s02)
		s12 = fma32(y, v, s12)
		x, y = a0[p+3], a1[p+3]
		v = b0[p+3]
		s00 = fma32(x, v, s00)
		s10 = fma32(y, v, s10)
		v = b1[p+3]
		s01 = fma32(x, v, s01)
		s11 = fma32(y, v, s11)
		v = b2[p+3]
		s02 = fma32(x, v, s02)
		s12 = fma32(y, v, s12)
	}
	for ; p < k; p++ {
		x, y = a0[p], a1[p]
		v = b0[p]
		s00 = fma32(x, v, s00)
		s10 = fma32(y, v, s10)
		v = b1[p]
		s01 = fma32(x, v, s01)
		s11 = fma32(y, v, s11)
		v = b2[p]
		s02 = fma32(x, v, s02)
		s12 = fma32(y, v, s12)
	}
	put(c0, 0, s00, acc)
	put(c0, 1, s01, acc)
	put(c0, 2, s02, acc)
	put(c1, 0, s10, acc)
	put(c1, 1, s11, acc)
	put(c1, 2, s12, acc)
}

// nt1x6Generic computes the outputs of row a0 against the six b rows from
// b (stride ldb) into c0[0:6], starting from the old outputs when from is
// set (see nt2x3Generic).
func nt1x6Generic(c0, a0, b []float32, ldb int, from, acc bool) {
	k := len(a0)
	b0, b1, b2, b3, b4, b5 := b[:k], b[ldb:ldb+k], b[2*ldb:2*ldb+k], b[3*ldb:3*ldb+k], b[4*ldb:4*ldb+k], b[5*ldb:5*ldb+k]
	b1, b2, b3, b4, b5 = b1[:k], b2[:k], b3[:k], b4[:k], b5[:k] // for the prover
	c0 = c0[:6]
	var s0, s1, s2, s3, s4, s5 float32
	if from {
		s0, s1, s2, s3, s4, s5 = c0[0], c0[1], c0[2], c0[3], c0[4], c0[5]
	}
	var x float32
	p := 0
	for ; p < k-3; p += 4 { // four steps a round, as in nt2x3Generic
		x = a0[p]
		s0 = fma32(x, b0[p], s0)
		s1 = fma32(x, b1[p], s1)
		s2 = fma32(x, b2[p], s2)
		s3 = fma32(x, b3[p], s3)
		s4 = fma32(x, b4[p], s4)
		s5 = fma32(x, b5[p], s5)
		x = a0[p+1]
		s0 = fma32(x, b0[p+1], s0)
		s1 = fma32(x, b1[p+1], s1)
		s2 = fma32(x, b2[p+1], s2)
		s3 = fma32(x, b3[p+1], s3)
		s4 = fma32(x, b4[p+1], s4)
		s5 = fma32(x, b5[p+1], s5)
		x = a0[p+2]
		s0 = fma32(x, b0[p+2], s0)
		s1 = fma32(x, b1[p+2], s1)
		s2 = fma32(x, b2[p+2], s2)
		s3 = fma32(x, b3[p+2], s3)
		s4 = fma32(x, b4[p+2], s4)
		s5 = fma32(x, b5[p+2], s5)
		x = a0[p+3]
		s0 = fma32(x, b0[p+3], s0)
		s1 = fma32(x, b1[p+3], s1)
		s2 = fma32(x, b2[p+3], s2)
		s3 = fma32(x, b3[p+3], s3)
		s4 = fma32(x, b4[p+3], s4)
		s5 = fma32(x, b5[p+3], s5)
	}
	for ; p < k; p++ {
		x = a0[p]
		s0 = fma32(x, b0[p], s0)
		s1 = fma32(x, b1[p], s1)
		s2 = fma32(x, b2[p], s2)
		s3 = fma32(x, b3[p], s3)
		s4 = fma32(x, b4[p], s4)
		s5 = fma32(x, b5[p], s5)
	}
	put(c0, 0, s0, acc)
	put(c0, 1, s1, acc)
	put(c0, 2, s2, acc)
	put(c0, 3, s3, acc)
	put(c0, 4, s4, acc)
	put(c0, 5, s5, acc)
}

// nnDirect is the unblocked generic NN product, for products of few rows.
func nnDirect(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if !acc {
			clear(ci)
		}
		ai := a[i*lda : i*lda+k]
		for p, av := range ai {
			bp := b[p*ldb : p*ldb+n]
			for j, bv := range bp {
				ci[j] = fma32(av, bv, ci[j])
			}
		}
	}
}

// tnDirect is the unblocked generic TN product, for products of few rows.
func tnDirect(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if !acc {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	for p := range k {
		ap := a[p*lda : p*lda+m]
		bp := b[p*ldb : p*ldb+n]
		for i, av := range ap {
			ci := c[i*ldc : i*ldc+n]
			for j, bv := range bp {
				ci[j] = fma32(av, bv, ci[j])
			}
		}
	}
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = fma32(alpha, v, y[i])
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
			s[l] = fma32(xs[l], float32(ys[l]), s[l])
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
