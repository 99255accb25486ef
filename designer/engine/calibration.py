"""Every calibration constant of the network, collective and training models, in one place.

Each constant names the measurement or reference it comes from; docs/calibration.md lists every
measurement with its source, and which constant it fits or only checks. The same constants serve
every design and every test; nothing here is tuned per test case. Times are in seconds,
bandwidths are fractions of the catalogue's raw link figures.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

US = 1e-6

# --- bandwidth efficiencies ----------------------------------------------------------------------

# Ring (Simple protocol) bus efficiency on a switched scale-up fabric: busbw asymptote / raw
# per-GPU NVLink bandwidth, for a fabric of no generation in GENERATIONS below (each generation
# has its own measured figure). The mean of the A100 (0.772) and H100 (0.817) ratios.
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

# NCCL tuning.cc protocol bandwidth factors relative to Simple: LL moves 8-byte lines of which 4
# are flags (0.5); LL128 moves 128-byte lines of which 8 bytes are flags (120 / 128, which NCCL
# rounds to 0.92 on Hopper).
LL_BANDWIDTH_FACTOR = 0.5
LL128_BANDWIDTH_FACTOR = 0.92

# Per-dimension rings on tori/meshes (TPU ICI): no measurement in the reference; uses the
# scale-up ring efficiency above.
TORUS_EFFICIENCY = SCALE_UP_RING_EFFICIENCY

# --- latencies (seconds) ---------------------------------------------------------------------------

PROTOCOLS = ("LL", "LL128", "Simple")

# NCCL tuning.cc base latencies (µs): ring LL 6.6 / LL128 14 / Simple 8.4; tree LL 6.8 / LL128 14 /
# Simple 8.4.
BASE_LATENCY = {"ring": {"LL": 6.6 * US, "LL128": 14.0 * US, "Simple": 8.4 * US},
                "tree": {"LL": 6.8 * US, "LL128": 14.0 * US, "Simple": 8.4 * US}}

# Per ring step over the scale-up fabric of no generation in GENERATIONS (TPU ICI, Infinity
# Fabric, PCIe...): the A100 figures below, the only measured ones when they were set.
SCALE_UP_STEP_LATENCY = {"LL": 2.0 * US, "Simple": 10.0 * US}

# Per step over the network: NCCL tuning.cc network hop latencies, ring LL 2.7 / LL128 4.0 /
# Simple 14 µs, tree LL 5 / LL128 8.5 / Simple 14 µs.
NET_STEP_LATENCY = {"ring": {"LL": 2.7 * US, "LL128": 4.0 * US, "Simple": 14.0 * US},
                    "tree": {"LL": 5.0 * US, "LL128": 8.5 * US, "Simple": 14.0 * US}}

# NVLS: NCCL's NVLS base latency (25 µs) plus the multicast set-up and the two Simple steps in
# and out; fitted as one 60 µs to 8×H100 NVLS 16 MB → 234.5 and 134 MB → 400.6 GB/s.
NVLS_LATENCY = 60.0 * US

# InfiniBand SHARP aggregation: one trip up and down the tree of switches; per switch level the
# network Simple hop latency above, plus NCCL's base (8.4 µs). No measurement in the reference.
SHARP_BASE_LATENCY = 8.4 * US


# --- per generation of the scale-up fabric ---------------------------------------------------------

@dataclass(frozen=True)
class Generation:
    """The collective constants of one NVLink generation.

    `ring_efficiency`: Simple busbw asymptote / raw per-GPU scale-up bandwidth. `step_latency`: one
    ring step over the scale-up fabric per protocol (a protocol absent from it is not used).
    `ll_max_busbw`: NCCL's cap on LL bus bandwidth (tuning.cc `llMaxBws`, GB/s) with 1, 2 and more
    than 2 scale-up domains in the communicator; it is what keeps LL to small messages, since LL's
    per-step latency is the smallest."""

    name: str
    ring_efficiency: float
    step_latency: dict
    ll_max_busbw: tuple | None

    @property
    def protocols(self) -> tuple:
        return tuple(p for p in PROTOCOLS if p in self.step_latency)

    def ll_cap(self, domains: int) -> float | None:
        """LL's bus bandwidth cap (GB/s) for a communicator spanning `domains` scale-up domains."""
        if self.ll_max_busbw is None:
            return None
        return self.ll_max_busbw[min(domains, 3) - 1]


GENERIC = Generation("generic", SCALE_UP_RING_EFFICIENCY, SCALE_UP_STEP_LATENCY, None)

# NVLink3 (A100). Ring efficiency 231.6 / 300 = 0.772 (Azure ND A100 v4 nccl-tests, 8 GB). Steps:
# LL 1.65 µs, fitted with the LL base latency and the LL cap below to 8×A100 1 MB → 36.2 GB/s
# (6.6 + 14 × 1.65 µs + 1 MB × 1.75 / 87.7 GB/s = 50.6 µs; NCCL's NVLink LL figure is 0.6 µs plus
# the kernel's per-step synchronisation); Simple 10 µs
# (NCCL's 3.4 µs hop plus the pipeline fill of one chunk), fitted to 16 MB → 109.2 and 268 MB →
# 213.9 GB/s. LL128 is left out: those mid-size points leave no room for a protocol with 0.92×
# the bandwidth at lower latency on that system. LL cap: NCCL's Ampere row, 87.7 / 22.5 / 19.0.
AMPERE = Generation("NVLink3 (A100)", 0.772, {"LL": 1.65 * US, "Simple": 10.0 * US}, (87.7, 22.5, 19.0))

# NVLink4 (H100, H200, H800). Ring efficiency 365–370 / 450 = 0.817 (NVIDIA/nccl issue 1455, ring
# forced, 2–4 GB). Steps fitted to the Azure ND H100 v5 table at 1–8 MB, where LL and LL128 beat
# NVLS's fixed latency: LL128 1.5 µs (2 MB → 81.9, 4 MB → 128.7); LL the same 1.5 µs (a step is
# never slower than LL128's, as in NCCL's hop latencies; 1 MB → 43.7 on H100 and 53.0 on H200
# fall either side); Simple 5 µs (as NVLink5, where Simple carries the mid sizes). LL cap: NCCL's
# Hopper row, 141 / 45 / 35.
HOPPER = Generation("NVLink4 (H100)", 0.817, {"LL": 1.5 * US, "LL128": 1.5 * US, "Simple": 5.0 * US},
                    (141.0, 45.0, 35.0))

# NVLink5 (B200, GB200). Ring efficiency 679.6 / 900 = 0.755 (Azure ND GB200 v6 nccl-tests, ring,
# 8 GB). Steps fitted to the same table at 1–64 MB: LL 1.6 µs (1–4 MB → 80.5–146.3), LL128 2.5 µs (8 MB →
# 253.5), Simple 5 µs (16–64 MB → 331–551). LL cap: NCCL's Blackwell row, 282 / 90 / 70.
BLACKWELL = Generation("NVLink5 (GB200)", 0.755, {"LL": 1.6 * US, "LL128": 2.5 * US, "Simple": 5.0 * US},
                       (282.0, 90.0, 70.0))

# Which generation a scale-up medium (catalogue id) belongs to; any other medium is GENERIC.
GENERATIONS = {"nvlink3": AMPERE, "nvlink4": HOPPER, "nvlink5": BLACKWELL}

# --- training --------------------------------------------------------------------------------------

# Memory is counted in GiB (2^30 bytes), capacity and need alike: vendors' HBM "GB" are GiB (an
# H100's 80 GB are 5 stacks of 16 GiB, and nvidia-smi shows 81,559 MiB, more than 80e9 bytes), and
# so are the figures of the tools a run is checked with (nvidia-smi, torch.cuda memory stats). The
# catalogue's `memory_gib` is the vendor's figure; a need in bytes is divided by GIB once, where it
# is counted (training._memory, streaming.weight_streaming).
GIB = 2 ** 30

# Memory: CUDA context, NCCL buffers, allocator fragmentation (GiB per GPU, as nvidia-smi shows
# them), as commonly budgeted in Megatron/DeepSpeed memory estimators; usable fraction of HBM.
MEMORY_OVERHEAD_GIB = 3.0
MEMORY_USABLE_FRACTION = 0.95

# Activation bytes per token per layer (Korthikanti et al. 2022, "Reducing activation
# recomputation", with sequence parallelism): (34 h + 5 a s) bytes without recompute, 34 h with
# selective recompute, 2 h (the layer input) with full recompute; all divided by TP. The 34 h and
# 5 a s are a GPT-3 block with dropout; training.py derives the bytes of the model's own block.
ACTIVATION_BYTES_PER_H = 34.0
FULL_RECOMPUTE_BYTES_PER_H = 2.0
# Standard (non-flash) attention keeps per head and token pair: the softmax output in bf16 (2 bytes,
# for the softmax backward and as the AV input); with attention dropout also its 1-byte mask and the
# dropped-out copy AV then uses (2 bytes): Korthikanti's 5 a s.
ATTENTION_SCORE_BYTES = 2.0
ATTENTION_DROPOUT_BYTES = 3.0

# Mixed-precision Adam: bf16 weights 2 + bf16 gradients 2 + fp32 master, momentum, variance 12
# bytes per parameter (ZeRO paper, Rajbhandari et al. 2020).
WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 2.0
OPTIMIZER_BYTES = 12.0


# --- matmul efficiency per accelerator generation and GEMM shape ---------------------------------

# Achieved fraction of dense BF16 peak in transformer layers on A100, as a function of a GEMM's
# narrowest dimension d: MATMUL_EFFICIENCY_MAX × d / (d + MATMUL_EFFICIENCY_HALF_H). Fitted to the
# two ends of Megatron-LM SC21 (arXiv:2104.04473) Table 1 on A100: 1.7B (h = 2304) 44 % and 1T
# (h = 25600) 52 % of peak (the 1T row includes its TP/PP communication and bubble, so the curve's
# top end is set a little above 52 %). d is the hidden size. Both fitting rows ran 2,048-token
# micro-batches, so the curve says nothing about wider token dimensions: the tokens one GEMM sees
# narrow d only below MATMUL_FIT_TOKENS (a micro-batch split by context parallelism, the tokens
# routed to one expert).
MATMUL_EFFICIENCY_MAX = 0.62
MATMUL_EFFICIENCY_HALF_H = 870.0
MATMUL_FIT_TOKENS = 2048

# Maximum achievable matmul FLOPS (MAMF, the best large BF16 GEMM measured) as a fraction of the
# dense BF16 peak, per generation: github stas00/ml-engineering, compute/accelerator/README.md,
# "Maximum Achievable Matmul FLOPS comparison table": A100 SXM 267.9 / 312 (CUDA 12.1), H100 SXM
# 792.1 / 989 (CUDA 12.1), B200 SXM 1745 / 2250, MI250X 147.0 / 191.5 per GCD (ROCm 6.2), MI300X
# 781.9 / 1300 (ROCm 6.2). A generation's curve is the A100 curve scaled by its MAMF over A100's,
# so the A100 fit above stays as it was. Generations with no measurement in that table (V100, TPU,
# Dojo, Cerebras) use A100's.
MAMF_FRACTION = {"ampere": 0.859, "hopper": 0.801, "blackwell": 0.776, "cdna2": 0.767, "cdna3": 0.601}
REFERENCE_GENERATION = "ampere"

# The generation of each catalogued accelerator (a part not listed uses the reference generation).
GENERATION = {"v100-sxm2-32gb": "volta", "a100-sxm-80gb": "ampere", "h100-sxm": "hopper", "h100-pcie": "hopper",
              "h200-sxm": "hopper", "h800-sxm": "hopper", "b200": "blackwell", "gb200": "blackwell",
              "mi250x": "cdna2", "mi300x": "cdna3", "tpu-v4": "tpu-v4", "dojo-d1": "dojo", "cs-2": "wse-2"}


def gemm_dim(hidden: float, tokens: float) -> float:
    """The narrowest GEMM dimension the efficiency curve takes: the hidden size, narrowed by the
    tokens one GEMM sees only where they are fewer than the fitting runs had."""
    return hidden if tokens >= MATMUL_FIT_TOKENS else min(hidden, tokens)


@functools.lru_cache(maxsize=4096)
def matmul_efficiency(part_id: str | None, dim: float) -> float:
    """Achieved fraction of dense peak for a GEMM whose narrowest dimension is `dim`, on the
    accelerator `part_id`."""
    generation = GENERATION.get(part_id or "", REFERENCE_GENERATION)
    scale = MAMF_FRACTION.get(generation, MAMF_FRACTION[REFERENCE_GENERATION]) / MAMF_FRACTION[REFERENCE_GENERATION]
    return MATMUL_EFFICIENCY_MAX * scale * dim / (dim + MATMUL_EFFICIENCY_HALF_H)
