//go:build cudnnfe_pkgconfig

package capi

// With -tags cudnnfe_pkgconfig the compile and link flags come from
// `pkg-config cudnnfe` (cudnnfe.pc is installed by `cmake --install`; set
// PKG_CONFIG_PATH for a non-standard prefix).

// #cgo pkg-config: cudnnfe
import "C"
