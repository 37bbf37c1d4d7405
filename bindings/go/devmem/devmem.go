// Package devmem is a minimal loader for the CUDA runtime's memory
// functions (cudaMalloc, cudaMemcpy, cudaFree, cudaDeviceSynchronize), enough
// for the cudnnfe tests and examples to run graphs on the GPU with device
// pointers. It is not a CUDA binding.
//
// Like libcudnnfe, it loads libcudart with dlopen at first use, so building
// needs no CUDA SDK: CUDNNFE_CUDART_LIBRARY names a specific library, else
// libcudart.so.13, libcudart.so.12 and libcudart.so are tried.
package devmem

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

typedef int (*devmem_malloc_t)(void **, size_t);
typedef int (*devmem_free_t)(void *);
typedef int (*devmem_memcpy_t)(void *, const void *, size_t, int);
typedef int (*devmem_memset_t)(void *, int, size_t);
typedef int (*devmem_sync_t)(void);
typedef int (*devmem_set_device_t)(int);
typedef int (*devmem_get_device_count_t)(int *);
typedef const char *(*devmem_error_string_t)(int);

static devmem_malloc_t devmem_malloc_fn;
static devmem_free_t devmem_free_fn;
static devmem_memcpy_t devmem_memcpy_fn;
static devmem_memset_t devmem_memset_fn;
static devmem_sync_t devmem_sync_fn;
static devmem_set_device_t devmem_set_device_fn;
static devmem_get_device_count_t devmem_get_device_count_fn;
static devmem_error_string_t devmem_error_string_fn;

// Returns NULL on success, else dlerror()'s text (static storage).
static const char *devmem_open(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return dlerror();
  devmem_malloc_fn = (devmem_malloc_t)dlsym(lib, "cudaMalloc");
  devmem_free_fn = (devmem_free_t)dlsym(lib, "cudaFree");
  devmem_memcpy_fn = (devmem_memcpy_t)dlsym(lib, "cudaMemcpy");
  devmem_memset_fn = (devmem_memset_t)dlsym(lib, "cudaMemset");
  devmem_sync_fn = (devmem_sync_t)dlsym(lib, "cudaDeviceSynchronize");
  devmem_set_device_fn = (devmem_set_device_t)dlsym(lib, "cudaSetDevice");
  devmem_get_device_count_fn = (devmem_get_device_count_t)dlsym(lib, "cudaGetDeviceCount");
  devmem_error_string_fn = (devmem_error_string_t)dlsym(lib, "cudaGetErrorString");
  if (!devmem_malloc_fn || !devmem_free_fn || !devmem_memcpy_fn || !devmem_memset_fn ||
      !devmem_sync_fn || !devmem_set_device_fn || !devmem_get_device_count_fn ||
      !devmem_error_string_fn) {
    dlclose(lib);
    return "a cudart symbol is missing";
  }
  return NULL;
}

static int devmem_malloc(uintptr_t *out, size_t n) {
  void *p = NULL;
  int st = devmem_malloc_fn(&p, n);
  if (st == 0) *out = (uintptr_t)p;
  return st;
}
static int devmem_free(uintptr_t p) { return devmem_free_fn((void *)p); }
static int devmem_to_device(uintptr_t dst, const void *src, size_t n) {
  return devmem_memcpy_fn((void *)dst, src, n, 1);  // cudaMemcpyHostToDevice
}
static int devmem_to_host(void *dst, uintptr_t src, size_t n) {
  return devmem_memcpy_fn(dst, (const void *)src, n, 2);  // cudaMemcpyDeviceToHost
}
static int devmem_memset(uintptr_t p, int v, size_t n) { return devmem_memset_fn((void *)p, v, n); }
static int devmem_sync(void) { return devmem_sync_fn(); }
static int devmem_set_device(int d) { return devmem_set_device_fn(d); }
static int devmem_device_count(int *n) { return devmem_get_device_count_fn(n); }
static const char *devmem_error_string(int st) { return devmem_error_string_fn(st); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

var (
	loadOnce sync.Once
	loadErr  error
)

// Load loads the CUDA runtime; every other function calls it. The error
// names the paths tried.
func Load() error {
	loadOnce.Do(func() {
		paths := []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so"}
		if p := os.Getenv("CUDNNFE_CUDART_LIBRARY"); p != "" {
			paths = []string{p}
		}
		var tried []string
		for _, p := range paths {
			cp := C.CString(p)
			msg := C.devmem_open(cp)
			C.free(unsafe.Pointer(cp))
			if msg == nil {
				return
			}
			tried = append(tried, p+": "+C.GoString(msg))
		}
		loadErr = errors.New("devmem: cannot load the CUDA runtime (" + strings.Join(tried, "; ") + ")")
	})
	return loadErr
}

func check(what string, st C.int) error {
	if st == 0 {
		return nil
	}
	return fmt.Errorf("devmem: %s: CUDA error %d (%s)", what, int(st), C.GoString(C.devmem_error_string(st)))
}

// DeviceCount returns cudaGetDeviceCount's answer.
func DeviceCount() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cudaGetDeviceCount", C.devmem_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// SetDevice makes device d current for the calling OS thread.
func SetDevice(d int) error {
	if err := Load(); err != nil {
		return err
	}
	return check("cudaSetDevice", C.devmem_set_device(C.int(d)))
}

// Malloc allocates n bytes of device memory and returns its address.
func Malloc(n int64) (uintptr, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, errors.New("devmem: negative size")
	}
	var p C.uintptr_t
	if err := check(fmt.Sprintf("cudaMalloc(%d)", n), C.devmem_malloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return uintptr(p), nil
}

// Free releases device memory from Malloc (0 is a no-op).
func Free(p uintptr) error {
	if p == 0 {
		return nil
	}
	if err := Load(); err != nil {
		return err
	}
	return check("cudaFree", C.devmem_free(C.uintptr_t(p)))
}

// Memset sets n bytes at device address p to v.
func Memset(p uintptr, v byte, n int64) error {
	if err := Load(); err != nil {
		return err
	}
	return check("cudaMemset", C.devmem_memset(C.uintptr_t(p), C.int(v), C.size_t(n)))
}

// Synchronize waits for all work on the current device.
func Synchronize() error {
	if err := Load(); err != nil {
		return err
	}
	return check("cudaDeviceSynchronize", C.devmem_sync())
}

// Element lists the element types the copies accept (no Go pointers).
type Element interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~bool
}

func bytesOf[T Element](s []T) (unsafe.Pointer, int) {
	if len(s) == 0 {
		return nil, 0
	}
	var zero T
	return unsafe.Pointer(&s[0]), len(s) * int(unsafe.Sizeof(zero))
}

// CopyToDevice copies src to device address dst.
func CopyToDevice[T Element](dst uintptr, src []T) error {
	if err := Load(); err != nil {
		return err
	}
	p, n := bytesOf(src)
	if n == 0 {
		return nil
	}
	return check("cudaMemcpy(host to device)", C.devmem_to_device(C.uintptr_t(dst), p, C.size_t(n)))
}

// CopyFromDevice copies len(dst) elements from device address src.
func CopyFromDevice[T Element](dst []T, src uintptr) error {
	if err := Load(); err != nil {
		return err
	}
	p, n := bytesOf(dst)
	if n == 0 {
		return nil
	}
	return check("cudaMemcpy(device to host)", C.devmem_to_host(p, C.uintptr_t(src), C.size_t(n)))
}

// Alloc allocates device memory for src and copies it there.
func Alloc[T Element](src []T) (uintptr, error) {
	_, n := bytesOf(src)
	p, err := Malloc(int64(n))
	if err != nil {
		return 0, err
	}
	if err := CopyToDevice(p, src); err != nil {
		Free(p)
		return 0, err
	}
	return p, nil
}
