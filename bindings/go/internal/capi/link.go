//go:build !cudnnfe_link && !cudnnfe_pkgconfig

package capi

// Linking, by default: none. The header is the module's own copy
// (include/cudnnfe/cudnnfe.h) and cudnnfe_loader.c forwards every C call to
// libcudnnfe loaded at run time, from $CUDNNFE_LIBRARY or as libcudnnfe.so.0
// through the dynamic loader, so `go build` needs no CGO_CFLAGS or
// CGO_LDFLAGS and the binary holds no path into a build directory. Both files
// are written by ../../gen_loader.py.
//
// -tags cudnnfe_link links -lcudnnfe instead (CGO_LDFLAGS says where);
// -tags cudnnfe_pkgconfig asks pkg-config (link_pkgconfig.go).

// #cgo CFLAGS: -I${SRCDIR}/include
// #cgo LDFLAGS: -ldl
import "C"
