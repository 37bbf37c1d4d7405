"""Device properties and building without a GPU (``create_device_properties``,
``pygraph(device_property=...)``): bad input anywhere; a convolution built from stored
properties wherever cuDNN 9.8+ loads (no GPU needed); and cudnn-frontend's deviceless AoT
flow (test_deviceless_aot_compilation.py) on a GPU with torch."""
import pytest

import cudnnfe

# An H100 SXM as cuDNN 9.28 describes it (values from the card's public specifications);
# tests/test_device_properties.cpp has the same.
H100_JSON = (
    '{"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],'
    '"regsPerBlock":65536,"multiProcessorCount":132,"smCountOrigin":0,"warpSize":32,'
    '"maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,'
    '"oversizedSharedMemoryPerBlock":0,"reservedSharedMemoryPerBlock":1024,'
    '"maxRegistersPerSM":65536,"maxCtasPerSM":32,"maxThreadsPerBlock":1024,'
    '"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,"supportCoopLaunch":1,'
    '"smClockRateKHz":1980000,"memClockRateKHz":2619000,"memoryBusWidth":5120,'
    '"l2CacheSize":52428800,"deviceName":"NVIDIA H100 80GB HBM3","deviceVer":900,'
    '"driverVer":12080,"cudaDeviceId":0,"totalGlobalMem":85031714816}')


def stored_properties():
    """The H100 properties, or a visible skip where cuDNN cannot make them here."""
    try:
        return cudnnfe.create_device_properties(H100_JSON)
    except (cudnnfe.CudnnUnavailableError, cudnnfe.GraphNotSupportedError) as exc:
        pytest.skip(f"cuDNN cannot make device properties here: {exc}")


def conv_graph(props=None, N=2, C=8, H=10, W=10, K=16, R=3, S=3):
    """cudnn-frontend's test graph (NHWC FLOAT conv, padding 1), smaller."""
    g = cudnnfe.pygraph(io_data_type=cudnnfe.data_type.FLOAT,
                        intermediate_data_type=cudnnfe.data_type.FLOAT,
                        compute_data_type=cudnnfe.data_type.FLOAT, device_property=props)
    x = g.tensor(name="X", dim=[N, C, H, W], stride=[C * H * W, 1, C * W, C])
    w = g.tensor(name="W", dim=[K, C, R, S], stride=[C * R * S, 1, C * S, C])
    y = g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    y.set_output(True)
    return g, x, w, y


def test_create_device_properties_bad_input():
    for bad in (None, 1.5, True, [0]):
        with pytest.raises(TypeError, match="device index"):
            cudnnfe.create_device_properties(bad)
    with pytest.raises(cudnnfe.BadSerializedDataError, match="not JSON"):
        cudnnfe.create_device_properties("deviceVer=900")
    with pytest.raises(cudnnfe.BadSerializedDataError, match="not an object"):
        cudnnfe.create_device_properties("[900]")
    with pytest.raises(cudnnfe.BadSerializedDataError, match="no JSON"):
        cudnnfe.create_device_properties("")
    with pytest.raises(TypeError, match="create_device_properties"):
        cudnnfe.pygraph(device_property="not properties")


def test_create_device_properties_needs_cudnn():
    try:
        cudnnfe.backend_version()
    except cudnnfe.CudnnUnavailableError:
        with pytest.raises(cudnnfe.CudnnUnavailableError):
            cudnnfe.create_device_properties(H100_JSON)
        return
    props = stored_properties()
    assert cudnnfe.create_device_properties(props.serialize()).serialize() == props.serialize()
    with pytest.raises(cudnnfe.BadSerializedDataError, match="refused the JSON"):
        cudnnfe.create_device_properties('{"deviceVer": 900}')


def test_deviceless_build_writes_a_plan_blob():
    props = stored_properties()
    g, x, w, y = conv_graph(props)
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    assert g.get_target() == cudnnfe.target.GPU and g.get_plan_name().startswith("eng")
    blob = g.serialize()
    assert blob == g.serialize_plan() and b"NVIDIA H100 80GB HBM3" in blob
    if cudnnfe.device_count() == 0:
        with pytest.raises(cudnnfe.BadSerializedDataError, match="no usable GPU"):
            cudnnfe.pygraph().deserialize(blob)


def test_deviceless_aot_compilation_like_cudnn_frontend():
    torch = pytest.importorskip("torch")
    if cudnnfe.device_count() == 0 or not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    props_original = cudnnfe.create_device_properties(0)
    json_original = props_original.serialize()
    props = cudnnfe.create_device_properties(json_original)
    assert props.serialize() == json_original

    N, K, C, H, W, R, S = 16, 256, 128, 64, 64, 3, 3
    graph, X, Wt, Y = conv_graph(props, N, C, H, W, K, R, S)
    graph.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    json_str = graph.serialize()

    x = torch.randn(N, C, H, W, device="cuda").to(memory_format=torch.channels_last)
    w = torch.randn(K, C, R, S, device="cuda").to(memory_format=torch.channels_last)
    y_ref = torch.nn.functional.conv2d(x, w, padding=[1, 1])
    handle = cudnnfe.create_handle()
    try:
        cudnnfe.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
        loaded = cudnnfe.pygraph()
        loaded.deserialize(handle, json_str)
        assert loaded.get_build_info().source == cudnnfe.plan_source.SERIALIZED
        y = torch.zeros_like(y_ref)
        workspace = torch.empty(loaded.get_workspace_size(), device="cuda", dtype=torch.uint8)
        loaded.execute({X: x, Wt: w, Y: y}, workspace, handle=handle)
        torch.cuda.synchronize()
        # FLOAT convolutions may use TF32 on both sides.
        torch.testing.assert_close(y_ref, y, atol=5e-2, rtol=1e-2)
    finally:
        cudnnfe.destroy_handle(handle)


def test_loaded_copy_binds_the_original_graphs_tensors(cpu, rng):
    # cudnn-frontend's deserialize flow executes the loaded graph with the tensors of the
    # graph that was serialized; a tensor of an unrelated graph is still refused.
    import numpy as np
    g, x, w, y = conv_graph()
    g.build(target=cpu)
    loaded = cudnnfe.pygraph()
    loaded.deserialize(g.serialize(), target=cpu)
    xs = rng.standard_normal((2, 10, 10, 8)).astype(np.float32).transpose(0, 3, 1, 2)
    ws = rng.standard_normal((16, 3, 3, 8)).astype(np.float32).transpose(0, 3, 1, 2)
    want = np.zeros((2, 10, 10, 16), np.float32).transpose(0, 3, 1, 2)
    got = np.zeros_like(want)
    g.execute({x: xs, w: ws, y: want}, None)
    loaded.execute({x: xs, w: ws, y: got}, None)
    assert np.abs(want).max() > 0
    np.testing.assert_array_equal(got, want)
    other, ox, ow, oy = conv_graph(C=4)
    with pytest.raises(ValueError, match="belongs to another graph"):
        loaded.execute({ox: xs, w: ws, y: got}, None)
