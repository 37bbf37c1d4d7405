// Device properties for building without a GPU (cudnnfe_device_properties_t,
// cuDNN 9.8 or later): one GPU as cuDNN describes it, made where the GPU is
// and loaded from its JSON anywhere with cuDNN (BuildOptions.DeviceProperties).
// It does not hold plans: write those with Graph.SerializePlan (plans.go).

package cudnnfe

import (
	"runtime"
	"sync"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// DeviceProperties are one GPU's properties as cuDNN sees them
// (cudnn-frontend's create_device_properties). A build given them
// (BuildOptions.DeviceProperties) makes that GPU's plan without using a
// GPU; the built graph cannot execute: write its plan with SerializePlan
// and load it with DeserializePlan on such a GPU (docs/plans.md). They are
// immutable and safe for concurrent use; builds keep what they need. Close
// releases them; a finalizer releases ones never closed.
type DeviceProperties struct {
	mu sync.RWMutex                             // write-locked only by Close
	p  capi.Struct_SS_cudnnfe_device_properties // nil once closed
}

// NewDeviceProperties describes CUDA device `device` (needs cuDNN and that
// GPU). Errors: ErrInvalidArgument (no such device), ErrCUDNNUnavailable,
// ErrNotSupported (the loaded cuDNN lacks device properties), ErrCUDAError.
func NewDeviceProperties(device int32) (*DeviceProperties, error) {
	var p capi.Struct_SS_cudnnfe_device_properties
	if err := objectless("NewDeviceProperties", func() int32 { return capi.DevicePropertiesCreate(device, &p) }); err != nil {
		return nil, err
	}
	return adoptDeviceProperties(p), nil
}

// LoadDeviceProperties loads what DeviceProperties.Serialize wrote (needs
// cuDNN, not a GPU). Errors: ErrBadSerializedData (not a JSON object, or
// cuDNN refuses it; the message says why), ErrCUDNNUnavailable,
// ErrNotSupported as for NewDeviceProperties.
func LoadDeviceProperties(json []byte) (*DeviceProperties, error) {
	var p capi.Struct_SS_cudnnfe_device_properties
	if err := objectless("LoadDeviceProperties", func() int32 { return capi.DevicePropertiesCreateFromJSON(json, &p) }); err != nil {
		return nil, err
	}
	return adoptDeviceProperties(p), nil
}

func adoptDeviceProperties(p capi.Struct_SS_cudnnfe_device_properties) *DeviceProperties {
	d := &DeviceProperties{p: p}
	runtime.SetFinalizer(d, (*DeviceProperties).finalize)
	return d
}

// Close releases the properties; graphs built with them are not affected.
// Closing twice is a no-op; Close waits for builds using them.
func (d *DeviceProperties) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return nil
	}
	runtime.SetFinalizer(d, nil)
	return d.destroy("DeviceProperties.Close")
}

func (d *DeviceProperties) destroy(op string) error {
	p := d.p
	d.p = nil
	return objectless(op, func() int32 { return capi.Cudnnfe_device_properties_destroy(p) })
}

func (d *DeviceProperties) finalize() {
	if d.p != nil {
		_ = d.destroy("DeviceProperties finalizer")
	}
}

// Serialize returns cuDNN's JSON of the properties, which
// LoadDeviceProperties takes back.
func (d *DeviceProperties) Serialize() ([]byte, error) {
	const op = "DeviceProperties.Serialize"
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.p == nil {
		return nil, argError(op, "device properties are closed")
	}
	var n int64
	if err := objectless(op, func() int32 { return capi.Cudnnfe_device_properties_serialize(d.p, nil, &n) }); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if n > 0 {
		if err := objectless(op, func() int32 { return capi.Cudnnfe_device_properties_serialize(d.p, buf, &n) }); err != nil {
			return nil, err
		}
	}
	return buf[:n], nil
}
