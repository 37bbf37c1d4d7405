// Package cmem allocates host memory on the C heap, for tests that drive
// Graph.Execute / ExecuteOrdered (which take raw addresses) on the CPU
// reference. Go test files cannot use cgo, hence this small package.
package cmem

// #include <stdlib.h>
import "C"

import "unsafe"

// Buf is n bytes of zeroed C-heap memory; Free it.
type Buf struct {
	p unsafe.Pointer
	n int
}

// Alloc returns n zeroed bytes of C memory (at least 1 byte is allocated).
func Alloc(n int) *Buf {
	p := C.calloc(C.size_t(n+1), 1)
	if p == nil {
		panic("cmem: calloc failed")
	}
	return &Buf{p: p, n: n}
}

// Bytes views the memory as a Go slice (valid until Free).
func (b *Buf) Bytes() []byte { return unsafe.Slice((*byte)(b.p), b.n) }

// Addr is the memory's address, as Execute takes it.
func (b *Buf) Addr() uintptr { return uintptr(b.p) }

// Free releases the memory.
func (b *Buf) Free() {
	C.free(b.p)
	b.p = nil
}

// View views the memory as a slice of T (valid until Free).
func View[T any](b *Buf) []T {
	var zero T
	return unsafe.Slice((*T)(b.p), uintptr(b.n)/unsafe.Sizeof(zero))
}

// From allocates C memory holding a copy of s.
func From[T any](s []T) *Buf {
	var zero T
	b := Alloc(len(s) * int(unsafe.Sizeof(zero)))
	copy(View[T](b), s)
	return b
}
