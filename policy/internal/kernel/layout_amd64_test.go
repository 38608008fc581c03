//go:build !purego

package kernel

import (
	"testing"
	"unsafe"
)

// TestArgLayout pins the field offsets of the argument blocks that the
// assembly reads by number.
func TestArgLayout(t *testing.T) {
	var nt ntArgs
	var mv mvArgs
	var bc bcArgs
	var av attvArgs
	var qa quantArgs
	var w8 w8Args
	var nl ntlArgs
	tests := []struct {
		field     string
		got, want uintptr
	}{
		{"ntArgs.b", unsafe.Offsetof(nt.b), 32},
		{"ntArgs.c", unsafe.Offsetof(nt.c), 64},
		{"ntArgs.kfull", unsafe.Offsetof(nt.kfull), 96},
		{"ntArgs.kmask", unsafe.Offsetof(nt.kmask), 104},
		{"ntArgs.bstep", unsafe.Offsetof(nt.bstep), 112},
		{"ntArgs.ntiles", unsafe.Offsetof(nt.ntiles), 120},
		{"ntArgs.rowmask", unsafe.Offsetof(nt.rowmask), 128},
		{"ntArgs.colmask", unsafe.Offsetof(nt.colmask), 136},
		{"ntArgs.acc", unsafe.Offsetof(nt.acc), 144},
		{"ntArgs.tail", unsafe.Offsetof(nt.tail), 152},
		{"ntArgs.astep", unsafe.Offsetof(nt.astep), 160},
		{"ntArgs.cstep", unsafe.Offsetof(nt.cstep), 168},
		{"ntArgs.nrb", unsafe.Offsetof(nt.nrb), 176},
		{"ntArgs.coff", unsafe.Offsetof(nt.coff), 184},
		{"ntArgs.scale", unsafe.Offsetof(nt.scale), 192},
		{"mvArgs.b", unsafe.Offsetof(mv.b), 8},
		{"mvArgs.c", unsafe.Offsetof(mv.c), 16},
		{"mvArgs.ldb", unsafe.Offsetof(mv.ldb), 24},
		{"mvArgs.kfull", unsafe.Offsetof(mv.kfull), 32},
		{"mvArgs.kmask", unsafe.Offsetof(mv.kmask), 40},
		{"mvArgs.ntiles", unsafe.Offsetof(mv.ntiles), 48},
		{"mvArgs.colmask", unsafe.Offsetof(mv.colmask), 56},
		{"mvArgs.acc", unsafe.Offsetof(mv.acc), 64},
		{"mvArgs.scale", unsafe.Offsetof(mv.scale), 72},
		{"bcArgs.c", unsafe.Offsetof(bc.c), 64},
		{"bcArgs.b", unsafe.Offsetof(bc.b), 128},
		{"bcArgs.astep", unsafe.Offsetof(bc.astep), 136},
		{"bcArgs.ldb", unsafe.Offsetof(bc.ldb), 144},
		{"bcArgs.k", unsafe.Offsetof(bc.k), 152},
		{"bcArgs.rowmask", unsafe.Offsetof(bc.rowmask), 160},
		{"bcArgs.masks", unsafe.Offsetof(bc.masks), 168},
		{"bcArgs.acc", unsafe.Offsetof(bc.acc), 200},
		{"bcArgs.cmask", unsafe.Offsetof(bc.cmask), 208},
		{"attvArgs.v", unsafe.Offsetof(av.v), 64},
		{"attvArgs.out", unsafe.Offsetof(av.out), 72},
		{"attvArgs.ldv", unsafe.Offsetof(av.ldv), 80},
		{"attvArgs.n", unsafe.Offsetof(av.n), 88},
		{"attvArgs.acc", unsafe.Offsetof(av.acc), 96},
		{"quantArgs.q", unsafe.Offsetof(qa.q), 8},
		{"quantArgs.scale", unsafe.Offsetof(qa.scale), 16},
		{"quantArgs.ldx", unsafe.Offsetof(qa.ldx), 24},
		{"quantArgs.ldq", unsafe.Offsetof(qa.ldq), 32},
		{"quantArgs.m", unsafe.Offsetof(qa.m), 40},
		{"quantArgs.kfull", unsafe.Offsetof(qa.kfull), 48},
		{"quantArgs.kmask", unsafe.Offsetof(qa.kmask), 56},
		{"w8Args.c", unsafe.Offsetof(w8.c), 32},
		{"w8Args.ascale", unsafe.Offsetof(w8.ascale), 64},
		{"w8Args.w", unsafe.Offsetof(w8.w), 80},
		{"w8Args.wstep", unsafe.Offsetof(w8.wstep), 88},
		{"w8Args.abytes", unsafe.Offsetof(w8.abytes), 96},
		{"w8Args.wsum", unsafe.Offsetof(w8.wsum), 104},
		{"w8Args.wscale", unsafe.Offsetof(w8.wscale), 112},
		{"w8Args.ntiles", unsafe.Offsetof(w8.ntiles), 120},
		{"w8Args.rowmask", unsafe.Offsetof(w8.rowmask), 128},
		{"w8Args.colmask", unsafe.Offsetof(w8.colmask), 136},
		{"w8Args.acc", unsafe.Offsetof(w8.acc), 168},
		{"ntlArgs.c", unsafe.Offsetof(nl.c), 48},
		{"ntlArgs.b", unsafe.Offsetof(nl.b), 96},
		{"ntlArgs.lstep", unsafe.Offsetof(nl.lstep), 104},
		{"ntlArgs.kq", unsafe.Offsetof(nl.kq), 112},
		{"ntlArgs.kr", unsafe.Offsetof(nl.kr), 120},
		{"ntlArgs.rowmask", unsafe.Offsetof(nl.rowmask), 128},
		{"ntlArgs.acc", unsafe.Offsetof(nl.acc), 136},
		{"ntlArgs.s", unsafe.Offsetof(nl.s), 144},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s at offset %d, the assembly reads %d", tc.field, tc.got, tc.want)
		}
	}
}
