"""PyTorch's GPU time for the work bench_plans times, so that the two print
side by side: `python3 torch_kernels.py <matmul|conv|sdpa>` prints
`RESULT <ms> <what>`. Median of CUDA-event timings after warm-up."""
import statistics
import sys

import torch
import torch.nn.functional as F


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main(which):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    if which == "matmul":
        a = torch.randn(1, 8192, 8192, device=dev, dtype=torch.bfloat16)
        b = torch.randn(1, 8192, 8192, device=dev, dtype=torch.bfloat16)
        ms = median_ms(lambda: torch.matmul(a, b), 20)
        what = "torch.matmul"
    elif which == "conv":
        x = torch.randn(32, 64, 56, 56, device=dev, dtype=torch.half).to(
            memory_format=torch.channels_last)
        w = torch.randn(64, 64, 3, 3, device=dev, dtype=torch.half).to(
            memory_format=torch.channels_last)
        torch.backends.cudnn.benchmark = True
        ms = median_ms(lambda: F.conv2d(x, w, padding=1), 200)
        what = "conv2d channels_last (cudnn.benchmark)"
    elif which == "sdpa":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 8192, 64, 128, device=dev, dtype=torch.bfloat16).transpose(1, 2)
        k = torch.randn(1, 8192, 8, 128, device=dev, dtype=torch.bfloat16).transpose(1, 2)
        v = torch.randn(1, 8192, 8, 128, device=dev, dtype=torch.bfloat16).transpose(1, 2)
        what = "SDPA (CUDNN backend)"
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            try:
                ms = median_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=True, enable_gqa=True), 20)
            except RuntimeError:
                # This backend may take no GQA: K and V expanded to h_q heads.
                k, v = (t.repeat_interleave(8, dim=1) for t in (k, v))
                ms = median_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=True), 20)
                what += ", kv expanded"
    else:
        raise SystemExit(f"unknown case {which}")
    print(f"RESULT {ms:.5f} {what}")


if __name__ == "__main__":
    main(sys.argv[1])
