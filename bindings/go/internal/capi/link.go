package capi

// Linking. The header and library are found through the environment, which
// works both against a build directory and against an installed library:
//
//	build directory: CGO_CFLAGS="-I$REPO/include"
//	                 CGO_LDFLAGS="-L$REPO/build -Wl,-rpath,$REPO/build"
//	installed:       nothing under /usr/local or /usr; else
//	                 CGO_CFLAGS="$(pkg-config --cflags cudnnfe)"
//	                 CGO_LDFLAGS="$(pkg-config --libs cudnnfe)"
//
// Building with -tags cudnnfe_pkgconfig asks pkg-config directly (see
// link_pkgconfig.go). ../../README.md has the details.

// #cgo LDFLAGS: -lcudnnfe
import "C"
