// Package cudnnfe is the Go binding of cudnnfe, a cuDNN Graph API frontend
// behind a stable C ABI (include/cudnnfe/cudnnfe.h): build a graph of
// tensors and operations (convolutions, matmuls, pointwise ops, reductions,
// normalizations — layer, RMS, batch, instance and adaptive layer norm —,
// softmax, attention forward and backward with padding, sliding windows,
// ALiBi, dropout and dBias, FP8 attention, pooling and resampling, reshape,
// transpose, slice, concatenate, random numbers), build it for the GPU or
// for the CPU reference, and execute it.
//
// # Graphs and tensors
//
// A Graph holds tensors, named by their UID (the Tensor type is that
// number), and operations. Inputs come from AddTensor and AddScalar; each
// op method (Matmul, Pointwise, SDPA, ConvFprop, ...) adds a node and
// returns its outputs as new virtual tensors whose shapes are inferred at
// once. Mark the outputs you want to read with SetOutput, then Build:
//
//	g, _ := cudnnfe.NewGraph()
//	defer g.Close()
//	a, _ := g.AddTensor("A", cudnnfe.DTypeHalf, []int64{16, 128, 512}, nil)
//	b, _ := g.AddTensor("B", cudnnfe.DTypeHalf, []int64{16, 512, 128}, nil)
//	c, err := g.Matmul(a, b, nil)
//	...
//	g.SetOutput(c, true)
//	err = g.Build(nil, &cudnnfe.BuildOptions{Target: cudnnfe.TargetGPU})
//
// Every op takes a pointer to its options struct; nil, a zero field, and
// the Default*Options functions all mean the defaults of the C init
// functions (cudnnfe_*_init_sized, called with the struct size this package
// was built with). A Tensor field left 0 means "no tensor". SDPAOptions and
// SDPABackwardOptions embed AttentionOptions (padding, diagonal band,
// ALiBi, scale tensor, dropout; docs/attention.md), so a backward can take
// its forward's: bwd.AttentionOptions = fwd.AttentionOptions.
//
// # Execution
//
// On the GPU, Execute takes device addresses (uintptr) for every bound
// tensor (BoundTensors), a device workspace of WorkspaceSize bytes and a
// CUDA stream; ExecuteOrdered takes the addresses in BoundTensors order.
// Device memory comes from any CUDA library; the devmem subpackage is a
// minimal one. On the CPU reference (TargetCPUReference), ExecuteHost takes
// Go slices, one per bound tensor, made with Host (float32, float64,
// []uint16 for FP16/BF16 bits — see Float32ToHalf and Float32ToBFloat16 —
// and integer and bool types) or HostBytes. Go memory is never passed to C
// as a uintptr.
//
// # Plans
//
// BuildOptions also carry plan control (docs/plans.md): Policy
// (BuildPolicyAll builds every engine configuration that passes the
// filters), the filters MaxWorkspaceSize, ExcludeNumericalNotes,
// ExcludeBehaviorNotes, RequireBehaviorNotes and ExcludeEngines, MaxPlans,
// and the plan cache settings. A built graph lists its plans (PlanCount,
// PlanInfo, Plans), selects one (SelectPlan) or the fastest (Autotune,
// AutotuneWith), says how it was built (BuildInfo) and writes its plan as a
// plan blob (SerializePlan) that LoadPlan builds again without heuristics or
// plan search. Fingerprint, GetPlanCacheStats, ClearPlanCache,
// PopulateCUDAGraph and UpdateCUDAGraph complete the set. Serialize writes
// the graph description only, which rebuilds anywhere.
//
// # Concurrency
//
// A built Graph does not change while it executes: any number of
// goroutines may Execute it at once, each with its own Handle (an
// execution context: its cuDNN handle and last error). Construction and
// queries on one Graph, and calls on one Handle, are serialized by
// mutexes, so sharing them is safe but sequential. SelectPlan and Autotune
// change the plan executes run: they take the Graph's write lock, so they
// wait for executes in flight, and executes started later run the new plan.
//
// # Errors
//
// Every error is an *Error holding the failure's Status (its kind) and the
// library's full message, which names the node, the tensors and the rule:
//
//	cudnnfe: Graph.Matmul: matmul "proj": a "a" [4,8] has K = 8 but b "b" [7,3] has K = 7; ... [CUDNNFE_STATUS_INVALID_GRAPH]
//
// Test the kind with errors.Is against the sentinels (ErrInvalidArgument,
// ErrInvalidGraph, ErrNotSupported, ErrCUDNNUnavailable, ...). Messages are
// right whichever OS thread a goroutine runs on: they are read from the
// object the call acted on (the Graph for graph calls, the Handle for
// executes); the few calls with no object (NewGraph, NewHandle,
// CUDNNVersion, DeviceCount, CheckVersion) run with the goroutine locked to
// its OS thread and read the thread's message before unlocking.
//
// # Resources
//
// Graph and Handle have Close; a finalizer releases objects that were never
// closed, but Close them to release C memory and cuDNN handles promptly.
//
// # Building
//
// The package uses cgo and links -lcudnnfe. Point cgo at the header and the
// library through the environment (see README.md):
//
//	CGO_CFLAGS="-I$REPO/include" CGO_LDFLAGS="-L$REPO/build -Wl,-rpath,$REPO/build" go build
//
// The low layer (internal/capi) is generated from the C header by SWIG
// (generate.sh) and committed, so building never needs SWIG.
package cudnnfe
