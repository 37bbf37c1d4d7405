//go:build cudnnfe_link

package capi

// With -tags cudnnfe_link the library is linked: -lcudnnfe, found through
// CGO_LDFLAGS (e.g. -L$REPO/build -Wl,-rpath,$REPO/build) or in /usr/local.

// #cgo CFLAGS: -I${SRCDIR}/include
// #cgo LDFLAGS: -lcudnnfe
import "C"
