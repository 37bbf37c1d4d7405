// The kernel cache for dynamic shapes (cudnnfe_kernel_cache_t): GPU builds
// of graphs of one topology and different shapes share compiled kernels
// through it (BuildOptions.KernelCache). It does not hold the plan caches
// (plans.go).

package cudnnfe

import (
	"runtime"
	"sync"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// KernelCache is cudnn-frontend's kernel cache (create_kernel_cache). It is
// safe for concurrent use; plans built with it keep what they need after it
// is closed. Close releases it; a finalizer releases one never closed.
type KernelCache struct {
	mu sync.Mutex
	p  capi.Struct_SS_cudnnfe_kernel_cache // nil once closed
}

// NewKernelCache creates an empty kernel cache. Errors: ErrOutOfMemory.
func NewKernelCache() (*KernelCache, error) {
	var p capi.Struct_SS_cudnnfe_kernel_cache
	if err := objectless("NewKernelCache", func() int32 { return capi.KernelCacheCreate(&p) }); err != nil {
		return nil, err
	}
	k := &KernelCache{p: p}
	runtime.SetFinalizer(k, (*KernelCache).finalize)
	return k, nil
}

// Close releases the cache. Closing twice is a no-op.
func (k *KernelCache) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.p == nil {
		return nil
	}
	runtime.SetFinalizer(k, nil)
	return k.destroy("KernelCache.Close")
}

func (k *KernelCache) destroy(op string) error {
	p := k.p
	k.p = nil
	return objectless(op, func() int32 { return capi.Cudnnfe_kernel_cache_destroy(p) })
}

func (k *KernelCache) finalize() {
	if k.p != nil {
		_ = k.destroy("KernelCache finalizer")
	}
}

// call runs fn on the live cache with k.mu held.
func (k *KernelCache) call(op string, fn func(p capi.Struct_SS_cudnnfe_kernel_cache) int32) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.p == nil {
		return argError(op, "kernel cache is closed")
	}
	return objectless(op, func() int32 { return fn(k.p) })
}

// Serialize returns cuDNN's JSON of the cache. Errors: ErrWrongState while
// it is empty (no GPU build used it and nothing was loaded),
// ErrNotSupported where the loaded cuDNN cannot serialize it.
func (k *KernelCache) Serialize() ([]byte, error) {
	const op = "KernelCache.Serialize"
	var n int64
	if err := k.call(op, func(p capi.Struct_SS_cudnnfe_kernel_cache) int32 {
		return capi.Cudnnfe_kernel_cache_serialize(p, nil, &n)
	}); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if n > 0 {
		if err := k.call(op, func(p capi.Struct_SS_cudnnfe_kernel_cache) int32 {
			return capi.Cudnnfe_kernel_cache_serialize(p, buf, &n)
		}); err != nil {
			return nil, err
		}
	}
	return buf[:n], nil
}

// Deserialize loads what Serialize wrote into this empty cache. Errors:
// ErrWrongState (not empty), ErrBadSerializedData (not JSON). cuDNN reads
// it when a GPU build first uses the cache, and refuses it there
// (ErrNotSupported) if another cuDNN or GPU wrote it.
func (k *KernelCache) Deserialize(data []byte) error {
	return k.call("KernelCache.Deserialize", func(p capi.Struct_SS_cudnnfe_kernel_cache) int32 {
		return capi.Cudnnfe_kernel_cache_deserialize(p, string(data))
	})
}
