package cudnnfe

import (
	"bytes"
	"errors"
	"testing"
)

// Device properties and building without a GPU (DeviceProperties,
// BuildOptions.DeviceProperties), as tests/test_device_properties.cpp
// checks in C: bad JSON on any machine; where cuDNN (9.8 or later) loads,
// the stored properties of an H100 round-trip through Serialize and build a
// convolution's GPU plan with no GPU.

// The properties of an H100 SXM as cuDNN writes them (the C test's).
const h100JSON = `{"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],` +
	`"regsPerBlock":65536,"multiProcessorCount":132,"smCountOrigin":0,"warpSize":32,` +
	`"maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,` +
	`"oversizedSharedMemoryPerBlock":0,"reservedSharedMemoryPerBlock":1024,` +
	`"maxRegistersPerSM":65536,"maxCtasPerSM":32,"maxThreadsPerBlock":1024,` +
	`"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,"supportCoopLaunch":1,` +
	`"smClockRateKHz":1980000,"memClockRateKHz":2619000,"memoryBusWidth":5120,` +
	`"l2CacheSize":52428800,"deviceName":"NVIDIA H100 80GB HBM3","deviceVer":900,` +
	`"driverVer":12080,"cudaDeviceId":0,"totalGlobalMem":85031714816}`

// storedH100 loads h100JSON, or skips where this machine's cuDNN cannot
// make device properties (absent, or older than 9.8).
func storedH100(t *testing.T) *DeviceProperties {
	t.Helper()
	p, err := LoadDeviceProperties([]byte(h100JSON))
	if errors.Is(err, ErrCUDNNUnavailable) || errors.Is(err, ErrNotSupported) {
		t.Skipf("cuDNN cannot make device properties here: %v", err)
	}
	must(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func TestDevicePropertiesRefuseBadJSON(t *testing.T) {
	_, err := LoadDeviceProperties(nil)
	wantErr(t, err, ErrBadSerializedData, "no JSON")
	_, err = LoadDeviceProperties([]byte("deviceVer=900"))
	wantErr(t, err, ErrBadSerializedData, "device properties", "not JSON")
	_, err = LoadDeviceProperties([]byte("[900, 132]"))
	wantErr(t, err, ErrBadSerializedData, "not an object")
	_, err = LoadDeviceProperties([]byte(h100JSON[:40]))
	wantErr(t, err, ErrBadSerializedData, "not JSON")
}

func TestDevicePropertiesOfADeviceNeedThatDevice(t *testing.T) {
	_, err := NewDeviceProperties(0)
	if _, verr := CUDNNVersion(); verr != nil {
		wantErr(t, err, ErrCUDNNUnavailable, "cuDNN")
		return
	}
	if n, derr := DeviceCount(); derr != nil || n == 0 {
		wantErr(t, err, ErrCUDNNUnavailable, "no usable CUDA device")
		return
	}
	if err == nil || errors.Is(err, ErrNotSupported) {
		t.Skipf("device 0 exists here (%v); the refusal of a missing one is the C test's", err)
	}
	t.Fatal(err)
}

func TestDevicePropertiesRoundTripAndDevicelessBuild(t *testing.T) {
	p := storedH100(t)
	json, err := p.Serialize()
	must(t, err)
	if !bytes.Contains(json, []byte(`"deviceVer"`)) {
		t.Fatalf("serialized properties lack deviceVer: %s", json)
	}
	again, err := LoadDeviceProperties(json)
	must(t, err)
	defer again.Close()
	if json2, err := again.Serialize(); err != nil || !bytes.Equal(json2, json) {
		t.Fatalf("round trip changed the JSON (%v):\n%s\n%s", err, json, json2)
	}

	g, x, w, y := devicelessConv(t)
	wantErr(t, g.Build(nil, &BuildOptions{Target: TargetCPUReference, DeviceProperties: p}),
		ErrInvalidArgument, "device_properties", "CPU_REFERENCE")
	h := newHandle(t)
	wantErr(t, g.Build(h, &BuildOptions{DeviceProperties: p}), ErrInvalidArgument,
		"handle and build options' device_properties")
	if err := g.Build(nil, &BuildOptions{DeviceProperties: p}); err != nil {
		t.Fatalf("deviceless build: %v", err)
	}
	if target, err := g.Target(); err != nil || target != TargetGPU {
		t.Fatalf("Target() = %v, %v; want GPU", target, err)
	}
	wantErr(t, g.Execute(h, []Binding{{x, 1}, {w, 1}, {y, 1}}, 0, 0, 0), ErrWrongState,
		"built from device properties")
	blob, err := g.SerializePlan()
	must(t, err)
	if !bytes.Contains(blob, []byte("NVIDIA H100 80GB HBM3")) {
		t.Fatal("the plan blob does not name the GPU it was built for")
	}

	must(t, p.Close())
	must(t, p.Close()) // closing twice is a no-op
	_, err = p.Serialize()
	wantErr(t, err, ErrInvalidArgument, "device properties are closed")
	other := newGraph(t)
	in := must1[Tensor](t)(other.AddTensor("x", DTypeFloat, []int64{4}, nil))
	must(t, other.SetOutput(must1[Tensor](t)(other.Pointwise(PointwiseReluFwd, in, 0, 0, nil)), true))
	wantErr(t, other.Build(nil, &BuildOptions{DeviceProperties: p}), ErrInvalidArgument,
		"DeviceProperties are closed")
}

// devicelessConv is the C test's convolution: y = conv(x, w), FLOAT,
// NHWC x [2, 8, 10, 10], KRSC w [16, 8, 3, 3], padding 1.
func devicelessConv(t *testing.T) (g *Graph, x, w, y Tensor) {
	g = newGraph(t)
	must(t, g.SetName("deviceless_conv"))
	must(t, g.SetIODType(DTypeFloat))
	must(t, g.SetComputeDType(DTypeFloat))
	x = must1[Tensor](t)(g.AddTensor("X", DTypeFloat, []int64{2, 8, 10, 10}, []int64{800, 1, 80, 8}))
	w = must1[Tensor](t)(g.AddTensor("W", DTypeFloat, []int64{16, 8, 3, 3}, []int64{72, 1, 24, 8}))
	y = must1[Tensor](t)(g.ConvFprop(x, w, &ConvOptions{PrePadding: []int64{1, 1}, PostPadding: []int64{1, 1}}))
	must(t, g.SetOutput(y, true))
	return g, x, w, y
}
