package cudnnfe

import (
	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// HeaderVersion is the version of the C header this binding was generated
// from (MAJOR*10000 + MINOR*100 + PATCH); ABIVersion its ABI major.
const (
	HeaderVersion = uint32(capi.CUDNNFE_VERSION)
	ABIVersion    = uint32(capi.CUDNNFE_ABI_VERSION)
)

// Version returns the version of the loaded libcudnnfe (same encoding as
// HeaderVersion).
func Version() uint32 { return capi.Cudnnfe_version() }

// CheckVersion reports whether the loaded libcudnnfe is at least the version
// this binding was generated from and has the same ABI major; the error
// (ErrNotSupported) says which differs.
func CheckVersion() error {
	return objectless("CheckVersion", func() int32 {
		return capi.Cudnnfe_check_version(HeaderVersion, ABIVersion)
	})
}

// CUDNNVersion loads cuDNN if needed and returns its version (91900 for
// 9.19.0). Without cuDNN the error is ErrCUDNNUnavailable and its message
// lists the paths tried. The environment variable CUDNNFE_CUDNN_LIBRARY
// names a specific libcudnn (CUDNNFE_CUDART_LIBRARY: the CUDA runtime).
func CUDNNVersion() (int64, error) {
	var v int64
	err := objectless("CUDNNVersion", func() int32 { return capi.Cudnnfe_cudnn_version(&v) })
	if err != nil {
		return 0, err
	}
	return v, nil
}

// DeviceCount returns the number of usable CUDA devices: 0, not an error,
// when the CUDA runtime or the driver is missing.
func DeviceCount() (int, error) {
	var n int32
	err := objectless("DeviceCount", func() int32 { return capi.Cudnnfe_device_count(&n) })
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// LibraryOrigin says which rule of the search order chose a loaded library
// (docs/loading.md): the explicit variable, the copy already loaded in the
// process, a search directory, or the system loader.
type LibraryOrigin int32

const (
	OriginNotLoaded     LibraryOrigin = LibraryOrigin(capi.CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED)
	OriginEnvironment   LibraryOrigin = LibraryOrigin(capi.CUDNNFE_LIBRARY_ORIGIN_ENVIRONMENT)
	OriginAlreadyLoaded LibraryOrigin = LibraryOrigin(capi.CUDNNFE_LIBRARY_ORIGIN_ALREADY_LOADED)
	OriginSearchDir     LibraryOrigin = LibraryOrigin(capi.CUDNNFE_LIBRARY_ORIGIN_SEARCH_DIR)
	OriginSystem        LibraryOrigin = LibraryOrigin(capi.CUDNNFE_LIBRARY_ORIGIN_SYSTEM)
)

// LibraryInfo is what cudnnfe loaded and why. Reasons are one line; when a
// library did not load, its reason lists every path tried.
type LibraryInfo struct {
	CudnnfePath   string
	CudnnPath     string
	CudnnVersion  int64
	CudnnOrigin   LibraryOrigin
	CudnnReason   string
	CudartPath    string
	CudartVersion int64
	CudartOrigin  LibraryOrigin
	CudartReason  string
}

// GetLibraryInfo loads cuDNN and the CUDA runtime if not yet tried (a
// missing library is reported, not an error) and says which files were
// loaded and why.
func GetLibraryInfo() (LibraryInfo, error) {
	c := capi.NewCudnnfe_library_info_t()
	defer capi.DeleteCudnnfe_library_info_t(c)
	capi.Cudnnfe_library_info_init_sized(c, int64(capi.LibraryInfoSize))
	if err := objectless("GetLibraryInfo", func() int32 { return capi.Cudnnfe_library_info(c) }); err != nil {
		return LibraryInfo{}, err
	}
	return LibraryInfo{
		CudnnfePath: c.GetCudnnfe_path(), CudnnPath: c.GetCudnn_path(),
		CudnnVersion: c.GetCudnn_version(), CudnnOrigin: LibraryOrigin(c.GetCudnn_origin()),
		CudnnReason: c.GetCudnn_reason(), CudartPath: c.GetCudart_path(),
		CudartVersion: c.GetCudart_version(), CudartOrigin: LibraryOrigin(c.GetCudart_origin()),
		CudartReason: c.GetCudart_reason(),
	}, nil
}

// Library names a run-time library for AddLibrarySearchDir.
type Library int32

const (
	LibraryCUDNN  Library = Library(capi.CUDNNFE_LIBRARY_CUDNN)
	LibraryCUDART Library = Library(capi.CUDNNFE_LIBRARY_CUDART)
)

// AddLibrarySearchDir adds a directory to search for lib after the explicit
// variable and the copy already loaded in the process. ErrWrongState once
// lib has been looked for.
func AddLibrarySearchDir(lib Library, dir string) error {
	return objectless("AddLibrarySearchDir", func() int32 {
		return capi.Cudnnfe_library_add_search_dir(int32(lib), dir)
	})
}

// LogLevel is a level of the library's diagnostics log.
type LogLevel int32

const (
	LogOff   LogLevel = LogLevel(capi.CUDNNFE_LOG_LEVEL_OFF)
	LogInfo  LogLevel = LogLevel(capi.CUDNNFE_LOG_LEVEL_INFO)
	LogDebug LogLevel = LogLevel(capi.CUDNNFE_LOG_LEVEL_DEBUG)
)

// SetLogCallback sends the library's log lines at level and below to fn
// (nil: standard error), overriding CUDNNFE_LOG. fn may run on any thread,
// one call at a time.
func SetLogCallback(fn func(level LogLevel, message string), level LogLevel) error {
	var raw func(int32, string)
	if fn != nil {
		raw = func(l int32, m string) { fn(LogLevel(l), m) }
	}
	return objectless("SetLogCallback", func() int32 { return capi.SetLogCallback(raw, int32(level)) })
}
