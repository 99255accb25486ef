"""LLM workloads: presets from the papers that describe them, and custom models (checked inline
objects: from a design's settings, or a workload file the user named)."""

from __future__ import annotations

from designer.model.errors import DesignerError


class WorkloadError(DesignerError):
    """A workload that cannot be used. `setting` is where it sits in a workload dict
    ("training.plan", "collective.ranks"): the caller names the option or JSON path it came from."""

    def __init__(self, problem: str, setting: str | None = None):
        super().__init__(problem)
        self.problem, self.setting = problem, setting


PRECISIONS = ("bf16", "fp16", "fp8")


# Architecture figures from each model's paper; tokens = the training run's token count.
PRESETS: dict[str, dict] = {
    # Brown et al. 2020, Table 2.1.
    "gpt3-175b": {"layers": 96, "hidden": 12288, "heads": 96, "ffn": 49152, "vocab": 50257, "seq": 2048,
                  "global_batch": 1536, "tokens": 300e9},
    # Narayanan et al. SC21 (arXiv:2104.04473) Table 1, first row: 1.7B on 32 A100, batch 512.
    "megatron-1.7b": {"layers": 24, "hidden": 2304, "heads": 24, "ffn": 9216, "vocab": 51200, "seq": 2048,
                      "global_batch": 512, "tokens": 300e9,
                      "plan": {"tp": 1, "pp": 1, "mb": 1, "recompute": "full", "zero": 0}},
    # Same table, last row: 1T on 3072 A100, batch 3072.
    "megatron-1t": {"layers": 128, "hidden": 25600, "heads": 160, "ffn": 102400, "vocab": 51200, "seq": 2048,
                    "global_batch": 3072, "tokens": 450e9},
    # Touvron et al. 2023 (Llama 2): 4M-token batches, 2T tokens, GQA with 8 KV heads.
    "llama2-70b": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn": 28672, "vocab": 32000,
                   "seq": 4096, "global_batch": 1024, "tokens": 2e12, "gated_mlp": True},
    # Llama 3 herd paper 2024: 126 layers, 16M-token batches at 8K, 15.6T tokens.
    "llama3-405b": {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn": 53248, "vocab": 128256,
                    "seq": 8192, "global_batch": 2048, "tokens": 15.6e12, "gated_mlp": True},
}


def parameters(model: dict) -> float:
    """Parameter count from the architecture (or the given `parameters`)."""
    if model.get("parameters"):
        return float(model["parameters"])
    h, L, ffn, V = model["hidden"], model["layers"], model["ffn"], model["vocab"]
    heads = model["heads"]
    kv = model.get("kv_heads", heads)
    attn = h * h * 2 + 2 * h * (h * kv // heads)
    mlp = (3 if model.get("gated_mlp") else 2) * h * ffn
    return L * (attn + mlp + 4 * h) + V * h * (1 if model.get("tied_embeddings", True) else 2)


def preset(name: str) -> dict:
    """A preset's figures, named."""
    if name not in PRESETS:
        raise WorkloadError(f"unknown workload preset '{name}'; choose from {', '.join(PRESETS)}")
    return {**PRESETS[name], "name": name}


def custom(data: dict, origin: str = "workload") -> dict:
    """A model from a checked inline object (`designer.io.schemas.MODEL`): a preset's figures
    overridden, the missing ones filled in. Refuses what a schema cannot say (`origin` names the
    place)."""
    base = dict(PRESETS[data["preset"]]) if "preset" in data else {}
    model = {**base, **{k: v for k, v in data.items() if k != "preset"}}
    model.setdefault("name", data.get("preset") or "custom")
    if "parameters" in model and not all(k in model for k in ("layers", "hidden")):
        # Only a parameter count: infer a shape with the GPT-3 aspect ratio (h ≈ 128 × layers).
        p = float(model["parameters"])
        layers = max(2, round((p / 12 / 128 ** 2) ** (1 / 3)))
        model.setdefault("layers", layers)
        model.setdefault("hidden", 128 * layers)
    model.setdefault("heads", max(1, model.get("hidden", 128) // 128))
    model.setdefault("ffn", 4 * model.get("hidden", 128))
    model.setdefault("vocab", 51200)
    model.setdefault("seq", 2048)
    model.setdefault("global_batch", 512)
    model.setdefault("tokens", 300e9)
    model.setdefault("precision", "bf16")
    if model["hidden"] % model["heads"]:
        raise WorkloadError(f"{origin}: hidden ({model['hidden']:,}) must be a multiple of heads ({model['heads']:,})")
    if model.get("kv_heads", 1) > model["heads"] or model["heads"] % model.get("kv_heads", 1):
        raise WorkloadError(f"{origin}: kv_heads ({model['kv_heads']:,}) must divide heads ({model['heads']:,})")
    return model


def default_preset(accelerators: int) -> str:
    """The default training workload for a design of this size."""
    if accelerators <= 64:
        return "megatron-1.7b"
    if accelerators <= 4096:
        return "llama2-70b"
    return "llama3-405b"
