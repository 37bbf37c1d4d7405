package capi

// The module offers the header's experimental part (FP8 attention, block
// scale, MoE grouped matmul, device properties: the CUDNNFE_EXPERIMENTAL
// section of include/cudnnfe/cudnnfe.h). Flags given here apply to every C
// file and cgo preamble of the package, whichever way it links.

// #cgo CFLAGS: -DCUDNNFE_EXPERIMENTAL
import "C"
