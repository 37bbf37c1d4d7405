// Package exrun builds and runs the examples' graphs on the GPU (device
// buffers through devmem) or on the CPU reference (Go slices), the same way.
package exrun

import (
	"fmt"

	cudnnfe "github.com/cudnnfe/cudnnfe/bindings/go"
	"github.com/cudnnfe/cudnnfe/bindings/go/devmem"
)

// Pick resolves the -target flag: "gpu", "cpu", or "auto" (the GPU when
// cudnnfe sees one and the CUDA runtime loads, else the CPU reference).
func Pick(flag string) (cudnnfe.Target, error) {
	switch flag {
	case "cpu":
		return cudnnfe.TargetCPUReference, nil
	case "gpu":
		return cudnnfe.TargetGPU, devmem.Load()
	case "auto":
		if n, err := cudnnfe.DeviceCount(); err == nil && n > 0 && devmem.Load() == nil {
			return cudnnfe.TargetGPU, nil
		}
		return cudnnfe.TargetCPUReference, nil
	}
	return 0, fmt.Errorf("-target must be auto, cpu or gpu, not %q", flag)
}

// Buffer is one bound tensor's host data: []float32 or []uint16 (FP16/BF16
// bits). Outputs are written back into Data.
type Buffer struct {
	Tensor cudnnfe.Tensor
	Data   any
}

// BuildAndRun builds g for target and executes it once on bufs.
func BuildAndRun(g *cudnnfe.Graph, target cudnnfe.Target, bufs []Buffer) error {
	h, err := cudnnfe.NewHandle(-1)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := g.Build(h, &cudnnfe.BuildOptions{Target: target}); err != nil {
		return err
	}
	if target == cudnnfe.TargetCPUReference {
		host := make([]cudnnfe.HostBuffer, len(bufs))
		for i, b := range bufs {
			switch d := b.Data.(type) {
			case []float32:
				host[i] = cudnnfe.Host(b.Tensor, d)
			case []uint16:
				host[i] = cudnnfe.Host(b.Tensor, d)
			default:
				return fmt.Errorf("buffer %d: unsupported type %T", i, b.Data)
			}
		}
		return g.ExecuteHost(h, host...)
	}

	ws, err := g.WorkspaceSize()
	if err != nil {
		return err
	}
	var dws uintptr
	if ws > 0 {
		if dws, err = devmem.Malloc(ws); err != nil {
			return err
		}
		defer devmem.Free(dws)
	}
	bindings := make([]cudnnfe.Binding, len(bufs))
	for i, b := range bufs {
		var p uintptr
		switch d := b.Data.(type) {
		case []float32:
			p, err = devmem.Alloc(d)
		case []uint16:
			p, err = devmem.Alloc(d)
		default:
			err = fmt.Errorf("buffer %d: unsupported type %T", i, b.Data)
		}
		if err != nil {
			return err
		}
		defer devmem.Free(p)
		bindings[i] = cudnnfe.Binding{Tensor: b.Tensor, Ptr: p}
	}
	if err := g.Execute(h, bindings, dws, ws, 0); err != nil {
		return err
	}
	if err := devmem.Synchronize(); err != nil {
		return err
	}
	for i, b := range bufs {
		switch d := b.Data.(type) {
		case []float32:
			err = devmem.CopyFromDevice(d, bindings[i].Ptr)
		case []uint16:
			err = devmem.CopyFromDevice(d, bindings[i].Ptr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
