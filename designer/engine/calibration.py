"""Every calibration constant of the network, collective and training models, in one place.

Each constant names the measurement or reference it comes from; docs/calibration.md lists every
measurement with its source, and which constant it fits or only checks. The same constants serve
every design and every test; nothing here is tuned per test case. Times are in seconds,
bandwidths are fractions of the catalogue's raw link figures.
"""

from __future__ import annotations

US = 1e-6

# --- bandwidth efficiencies ----------------------------------------------------------------------

# Ring (Simple protocol) bus efficiency on a switched scale-up fabric: busbw asymptote / raw
# per-GPU NVLink bandwidth. 8×A100 NVSwitch, 8 GB: 231.6 / 300 = 0.772 (Azure ND A100 v4
# nccl-tests); 8×H100 ring forced, 2–4 GB: 365–370 / 450 = 0.817 (NVIDIA/nccl issue 1455).
# One value for both: their mean.
SCALE_UP_RING_EFFICIENCY = 0.795

# NVLS (NVLink SHARP) allreduce: algbw = S / t ≈ 0.61 × per-GPU NVLink bandwidth, i.e. busbw
# 1.75 × 450 × 0.61 = 480 GB/s on 8×H100 (Azure ND H100 v5 nccl-tests 8 GB: 478.9; SimAI's NVLS
# figure 475 GB/s).
NVLS_EFFICIENCY = 0.61

# Scale-out links: achieved / raw per port through NCCL. ConnectX-7 NDR 400G reaches 46–49 GB/s
# per NIC of 50 GB/s raw (nccl-tests issues 267/290; SimAI's 48.5 GB/s) → 48.5 / 50.
NET_EFFICIENCY = 0.97

# NCCL tuning.cc: tree allreduce bus bandwidth = ring bus bandwidth × 0.92.
TREE_BANDWIDTH_FACTOR = 0.92

# NCCL tuning.cc protocol bandwidth factors: LL about 0.5 × Simple. (LL128 is not modelled: the
# A100 mid-size measurements, 16 MB → 109 GB/s, show no protocol with 0.92× bandwidth at low
# latency on that system.)
LL_BANDWIDTH_FACTOR = 0.5

# Per-dimension rings on tori/meshes (TPU ICI): no measurement in the reference; uses the
# scale-up ring efficiency above.
TORUS_EFFICIENCY = SCALE_UP_RING_EFFICIENCY

# --- latencies (seconds) ---------------------------------------------------------------------------

# NCCL tuning.cc base latencies (µs): ring LL 6.6 / Simple 8.4; tree LL 6.8 / Simple 8.4.
BASE_LATENCY = {"ring": {"LL": 6.6 * US, "Simple": 8.4 * US}, "tree": {"LL": 6.8 * US, "Simple": 8.4 * US}}

# Per ring step over the scale-up fabric. LL: 2.0 µs — fitted with the base latency to 8×A100
# 1 MB → 36.2 GB/s (6.6 + 14 × 2.0 = 34.6 µs); NCCL's NVLink LL figure is 0.6 µs plus the
# kernel's per-step synchronisation. Simple: 10 µs per step (NCCL's 3.4 µs hop plus the pipeline
# fill of one chunk), fitted to 8×A100 16 MB → 109.2 and 268 MB → 213.9 GB/s.
SCALE_UP_STEP_LATENCY = {"LL": 2.0 * US, "Simple": 10.0 * US}

# Per step over the network: NCCL tuning.cc network hop latencies, ring LL 2.7 / Simple 14 µs,
# tree LL 5 / Simple 14 µs.
NET_STEP_LATENCY = {"ring": {"LL": 2.7 * US, "Simple": 14.0 * US}, "tree": {"LL": 5.0 * US, "Simple": 14.0 * US}}

# NVLS: NCCL's NVLS base latency (25 µs) plus the multicast set-up; fitted as 40 µs base + 2
# Simple steps (in, out) to 8×H100 NVLS 16 MB → 234.5 and 134 MB → 400.6 GB/s.
NVLS_BASE_LATENCY = 40.0 * US
NVLS_STEPS = 2

# InfiniBand SHARP aggregation: one trip up and down the tree of switches; per switch level the
# network Simple hop latency above, plus NCCL's base (8.4 µs). No measurement in the reference.
SHARP_BASE_LATENCY = 8.4 * US

# --- training --------------------------------------------------------------------------------------

# Achieved fraction of dense BF16 peak in transformer layers as a function of the hidden size h:
# MATMUL_EFFICIENCY_MAX × h / (h + MATMUL_EFFICIENCY_HALF_H). Fitted to the two ends of
# Megatron-LM SC21 (arXiv:2104.04473) Table 1 on A100: 1.7B (h = 2304) 44 % and 1T (h = 25600)
# 52 % of peak (the 1T row includes its TP/PP communication and bubble, so the curve's top end is
# set a little above 52 %).
MATMUL_EFFICIENCY_MAX = 0.62
MATMUL_EFFICIENCY_HALF_H = 870.0

# Memory: CUDA context, NCCL buffers, allocator fragmentation (GB per GPU), as commonly budgeted
# in Megatron/DeepSpeed memory estimators; usable fraction of HBM.
MEMORY_OVERHEAD_GB = 3.0
MEMORY_USABLE_FRACTION = 0.95

# Activation bytes per token per layer (Korthikanti et al. 2022, "Reducing activation
# recomputation", with sequence parallelism): (34 h + 5 a s) bytes without recompute, 34 h with
# selective recompute, 2 h (the layer input) with full recompute; all divided by TP.
ACTIVATION_BYTES_PER_H = 34.0
ACTIVATION_ATTENTION_BYTES = 5.0
FULL_RECOMPUTE_BYTES_PER_H = 2.0

# Mixed-precision Adam: bf16 weights 2 + bf16 gradients 2 + fp32 master, momentum, variance 12
# bytes per parameter (ZeRO paper, Rajbhandari et al. 2020).
WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 2.0
OPTIMIZER_BYTES = 12.0
