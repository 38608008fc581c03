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

// dotGeneric is the 16-lane dot product of the package documentation over
// x and y (equal lengths): lanes by p mod 16, zero padding, fixed tree. The
// lanes are local variables so that the compiler keeps them in registers.
func dotGeneric(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15 float32
	p := 0
	for ; p+lanes <= n; p += lanes {
		xs, ys := x[p:p+lanes:p+lanes], y[p:p+lanes:p+lanes]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
		s4 += xs[4] * ys[4]
		s5 += xs[5] * ys[5]
		s6 += xs[6] * ys[6]
		s7 += xs[7] * ys[7]
		s8 += xs[8] * ys[8]
		s9 += xs[9] * ys[9]
		s10 += xs[10] * ys[10]
		s11 += xs[11] * ys[11]
		s12 += xs[12] * ys[12]
		s13 += xs[13] * ys[13]
		s14 += xs[14] * ys[14]
		s15 += xs[15] * ys[15]
	}
	s := [lanes]float32{s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15}
	if p < n {
		l := 0
		for ; p < n; p, l = p+1, l+1 {
			s[l] += x[p] * y[p]
		}
		// The padding contributes +0 products (which turns a -0 lane into +0).
		for ; l < lanes; l++ {
			s[l] += 0
		}
	}
	return reduce16(&s)
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

func ntGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	for i := range m {
		ai := a[i*lda : i*lda+k]
		ci := c[i*ldc : i*ldc+n]
		for j := range n {
			d := dotGeneric(ai, b[j*ldb:j*ldb+k])
			if acc {
				ci[j] += d
			} else {
				ci[j] = d
			}
		}
	}
}

func nnGeneric(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if !acc {
			clear(ci)
		}
		ai := a[i*lda : i*lda+k]
		for p, av := range ai {
			bp := b[p*ldb : p*ldb+n]
			for j, bv := range bp {
				ci[j] += av * bv
			}
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
		ap := a[p*lda : p*lda+m]
		bp := b[p*ldb : p*ldb+n]
		for i, av := range ap {
			ci := c[i*ldc : i*ldc+n]
			for j, bv := range bp {
				ci[j] += av * bv
			}
		}
	}
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scaleGeneric(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// dotI8Generic is dotGeneric with int8 y, converted exactly to float32.
func dotI8Generic(x []float32, y []int8) float32 {
	var s [lanes]float32
	n := len(x)
	y = y[:n]
	p := 0
	for ; p+lanes <= n; p += lanes {
		xs, ys := x[p:p+lanes:p+lanes], y[p:p+lanes:p+lanes]
		for l := range lanes {
			s[l] += xs[l] * float32(ys[l])
		}
	}
	if p < n {
		l := 0
		for ; p < n; p, l = p+1, l+1 {
			s[l] += x[p] * float32(y[p])
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
			d := dotI8Generic(ai, q[j*ldq:j*ldq+k]) * scale[j]
			if acc {
				ci[j] += d
			} else {
				ci[j] = d
			}
		}
	}
}
