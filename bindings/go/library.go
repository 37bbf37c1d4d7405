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
