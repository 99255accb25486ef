"""Training on accelerators whose weights live off the chip: Tesla Dojo's D1 (on-die SRAM, the
weights and optimizer state in the HBM of the Dojo Interface Processors) and Cerebras' CS-2
(activations on the wafer, weights streamed from MemoryX over SwarmX). Each model is stated with
its figures and sources here and in docs/calibration.md ("Off-chip weight memory").

- Dojo: a D1 counts its share of its system tray's DIP HBM as memory; every micro-batch reads its
  stage's weights from there twice (forward, backward) and writes and reads its stashed
  activations, at its share of the DIPs' HBM bandwidth, hidden behind the micro-batch's compute
  as far as it lasts. Everything else is the GPU model (the 2D mesh is the fabric).
- Cerebras: pure data parallelism, one replica per CS-2. Each micro-batch streams every layer's
  weights in for the forward and again for the backward, and the gradients out, over the CS-2's
  12 × 100 GbE; SwarmX broadcasts the weights and sums the gradients on the way (no separate
  data-parallel step). The stream runs under the wafer's compute; the step is the longer of the
  two per micro-batch. The wafer holds the micro-batch's activations (the largest micro-batch
  that fits is used) and one layer's weights and gradients, double-buffered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from designer.engine import calibration as cal
from designer.engine import workloads
from designer.engine.result import rounded


@dataclass(frozen=True)
class OffChip:
    offchip_gib: float  # memory per accelerator beyond its own (GiB)
    offchip_bytes_per_s: float  # bandwidth to it per accelerator (bytes/s, each way)
    weight_streaming: bool  # weights streamed per layer, pure data parallel (Cerebras)
    overhead_gib: float  # memory the runtime keeps (the GPU figure, CUDA context and NCCL buffers, does not apply)
    description: str


# Dojo (Tesla AI Day 2022; Hot Chips 34, "Tesla Dojo System"): a Dojo Interface Processor holds
# 32 GB of HBM at 800 GB/s; a system tray has 6 training tiles (150 D1) and 20 DIPs, i.e. 640 GB
# per tray (the ExaPOD's 20 trays: 12.8 TB, Tesla's "13 TB HBM"). Its HBM "GB" are GiB, as every
# vendor's HBM figure (calibration.GIB).
DOJO_DIP_HBM_GIB = 32.0
DOJO_DIP_HBM_BYTES_PER_S = 800e9
DOJO_DIPS_PER_TRAY = 20
DOJO_D1_PER_TRAY = 150

# Cerebras CS-2: 12 × 100 GbE (1.2 Tb/s) to MemoryX and SwarmX (cerebras.net, "Weight streaming"
# and Condor Galaxy 1 pages; catalogue part cs-2).
CS2_STREAM_BYTES_PER_S = 12 * 100e9 / 8

MODELS = {
    "dojo-d1": OffChip(
        offchip_gib=DOJO_DIP_HBM_GIB * DOJO_DIPS_PER_TRAY / DOJO_D1_PER_TRAY,
        offchip_bytes_per_s=DOJO_DIP_HBM_BYTES_PER_S * DOJO_DIPS_PER_TRAY / DOJO_D1_PER_TRAY,
        weight_streaming=False,
        overhead_gib=0.0,  # Dojo's runtime reserve is not published: none assumed
        description=(f"Dojo: 442.5 MiB SRAM per D1 plus its share of the DIP HBM (20 × 32 GiB per tray of 150 D1 = "
                     f"{DOJO_DIP_HBM_GIB * DOJO_DIPS_PER_TRAY / DOJO_D1_PER_TRAY:.2f} GiB at "
                     f"{DOJO_DIP_HBM_BYTES_PER_S * DOJO_DIPS_PER_TRAY / DOJO_D1_PER_TRAY / 1e9:.0f} GB/s); weights "
                     "streamed from it per micro-batch under the compute")),
    "cs-2": OffChip(
        offchip_gib=0.0,
        offchip_bytes_per_s=CS2_STREAM_BYTES_PER_S,
        weight_streaming=True,
        overhead_gib=0.0,  # counted in the wafer memory below
        description=("Cerebras weight streaming: one data-parallel replica per CS-2, weights streamed from MemoryX "
                     "and gradients summed in SwarmX over 12 × 100 GbE, under the wafer's compute; activations on "
                     "the wafer's 40 GB (37.25 GiB) SRAM")),
}


def model_for(part_id: str | None) -> OffChip | None:
    return MODELS.get(part_id or "")


def weight_streaming(offchip: OffChip, model: dict, systems: int, peak_tflops: float, wafer_gib: float,
                     efficiency: float) -> dict:
    """The training section for Cerebras weight streaming (see the module's description)."""
    batch, s, h, layers = model["global_batch"], model["seq"], model["hidden"], model["layers"]
    params = workloads.parameters(model)
    out = {"plan": {"tp": 1, "pp": 1, "vp": 1, "dp": systems, "cp": 1, "sp": 0, "ep": 1, "mb": 1,
                    "recompute": "none", "zero": 0, "attention": "flash", "auto": True},
           "fits": False, "timed": False, "memory_capacity_gib": rounded(wafer_gib)}
    per_system = math.ceil(batch / systems)
    layer_weights = params / layers
    usable = wafer_gib * cal.MEMORY_USABLE_FRACTION

    def wafer_memory(mb: int) -> dict:
        act = mb * s * layers * cal.ACTIVATION_BYTES_PER_H * h  # every layer's activations of the micro-batch
        out_gib = {"weights": 2 * cal.WEIGHT_BYTES * layer_weights / cal.GIB,
                   "gradients": 2 * cal.GRADIENT_BYTES * layer_weights / cal.GIB, "optimizer": 0.0,
                   "activations": act / cal.GIB, "logits": 4.0 * mb * s * model["vocab"] / cal.GIB, "overhead": 0.0}
        out_gib["total"] = sum(out_gib.values())
        return {k: rounded(v) for k, v in out_gib.items()}

    mb = next((b for b in range(per_system, 0, -1) if per_system % b == 0 and wafer_memory(b)["total"] <= usable),
              None)
    if mb is None:
        mem = wafer_memory(1)
        out.update(memory_per_gpu_gib=mem, microbatches=per_system, step_time_s=None,
                   why=f"one sequence's activations need {mem['total']:.1f} GiB but {usable:.1f} GiB of the wafer's "
                       "SRAM are usable")
        return out
    m = per_system // mb
    flops_token = 6.0 * workloads.active_parameters(model) + 12.0 * s * h * layers + 6.0 * h * model["vocab"]
    t_compute_mb = flops_token * mb * s / (peak_tflops * 1e12 * efficiency)
    t_stream_mb = 2 * cal.WEIGHT_BYTES * params / offchip.offchip_bytes_per_s  # in: forward and backward weights
    exposed = m * max(0.0, t_stream_mb - t_compute_mb)
    step = m * t_compute_mb + exposed
    tokens_step = per_system * systems * s
    out["plan"]["mb"] = mb
    out.update(fits=True, timed=True, why=None, memory_per_gpu_gib=wafer_memory(mb), microbatches=m,
               step_time_s=rounded(step), compute_s=rounded(m * t_compute_mb), exposed_tp_s=0.0, exposed_cp_s=0.0,
               exposed_ep_s=0.0, exposed_pp_s=0.0, exposed_dp_s=0.0, exposed_memory_s=rounded(exposed),
               bubble_s=0.0,
               tflops_per_gpu=rounded(flops_token * tokens_step / systems / step / 1e12),
               model_tflops_per_gpu=rounded(flops_token * tokens_step / systems / step / 1e12),
               mfu=rounded(flops_token * tokens_step / systems / step / (peak_tflops * 1e12)),
               tokens_per_s=rounded(tokens_step / step),
               days=rounded(model.get("tokens", 0) / (tokens_step / step) / 86400))
    return out
