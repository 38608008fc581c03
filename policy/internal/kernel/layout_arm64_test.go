//go:build !purego

package kernel

import (
	"testing"
	"unsafe"
)

// TestNEONArgLayout pins the field offsets of the argument blocks that the
// NEON assembly reads by number.
func TestNEONArgLayout(t *testing.T) {
	var nt neonNTArgs
	var bc neonBCArgs
	tests := []struct {
		field     string
		got, want uintptr
	}{
		{"neonNTArgs.b", unsafe.Offsetof(nt.b), 8},
		{"neonNTArgs.nblk", unsafe.Offsetof(nt.nblk), 40},
		{"neonNTArgs.at", unsafe.Offsetof(nt.at), 48},
		{"neonNTArgs.bt", unsafe.Offsetof(nt.bt), 56},
		{"neonNTArgs.out", unsafe.Offsetof(nt.out), 64},
		{"neonBCArgs.astep", unsafe.Offsetof(bc.astep), 32},
		{"neonBCArgs.b", unsafe.Offsetof(bc.b), 40},
		{"neonBCArgs.ldb", unsafe.Offsetof(bc.ldb), 48},
		{"neonBCArgs.k", unsafe.Offsetof(bc.k), 56},
		{"neonBCArgs.c", unsafe.Offsetof(bc.c), 64},
		{"neonBCArgs.rows", unsafe.Offsetof(bc.rows), 96},
		{"neonBCArgs.acc", unsafe.Offsetof(bc.acc), 104},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s at offset %d, the assembly reads %d", tc.field, tc.got, tc.want)
		}
	}
}
