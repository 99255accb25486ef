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


class ModelFieldError(WorkloadError):
    """A model field that cannot be used; `field` is its key, so the caller names the JSON path."""

    def __init__(self, origin: str, field: str, problem: str):
        super().__init__(f"{origin}: {field}: {problem}")
        self.problem, self.field = problem, field


# Architecture figures from each model's paper or released configuration (docs/calibration.md,
# "Workload presets"); tokens = the training run's token count, global_batch in sequences.
# Mixture-of-experts fields: `experts` routed experts of width `moe_ffn` in every layer after the
# first `dense_layers`, each token sent to `top_k` of them plus `shared_experts` always-on ones.
# `dropout` (default true, as in GPT-3, OPT and Megatron's runs) adds dropout masks to the stored
# activations; the Llama, Mixtral, DeepSeek and PaLM presets pre-train without dropout (PaLM section
# 5; the others' released code and configurations have none or set it to 0).
PRESETS: dict[str, dict] = {
    # Brown et al. 2020, Table 2.1 (batch 3.2M tokens = 1536 × 2048).
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
                   "seq": 4096, "global_batch": 1024, "tokens": 2e12, "gated_mlp": True, "dropout": False},
    # Llama 3 herd paper (Dubey et al. 2024, arXiv:2407.21783) Table 3: 8B 32 layers, 4096 wide,
    # 32 heads, 8 KV heads, FFN 14336, vocabulary 128,256, untied embeddings, 8K context, 15T
    # tokens. Batch: 4M tokens (512 × 8192) is this preset's assumption (the paper states the
    # 405B schedule only).
    "llama3-8b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 128256,
                  "seq": 8192, "global_batch": 512, "tokens": 15e12, "gated_mlp": True, "tied_embeddings": False,
                  "dropout": False},
    # Same table: 70B 80 layers, 8192 wide, 64 heads, 8 KV heads, FFN 28672; batch as for 8B.
    "llama3-70b": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn": 28672, "vocab": 128256,
                   "seq": 8192, "global_batch": 512, "tokens": 15e12, "gated_mlp": True,
                   "tied_embeddings": False, "dropout": False},
    # Same table: 405B 126 layers, 16384 wide, 128 heads, 8 KV heads, FFN 53248; 16M-token
    # batches at 8K (section 3.4.1), 15.6T tokens.
    "llama3-405b": {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn": 53248, "vocab": 128256,
                    "seq": 8192, "global_batch": 2048, "tokens": 15.6e12, "gated_mlp": True,
                    "tied_embeddings": False, "dropout": False},
    # The 405B long-context stage (section 3.4.2 and Table 4): 128K sequences, 16M-token batches
    # (128 × 131072), about 800B tokens; Meta ran it with context parallelism 16.
    "llama3-405b-128k": {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn": 53248,
                         "vocab": 128256, "seq": 131072, "global_batch": 128, "tokens": 800e9, "gated_mlp": True,
                         "tied_embeddings": False, "dropout": False},
    # Mixtral 8x7B (Jiang et al. 2024, arXiv:2401.04088, Table 1): 32 layers, 4096 wide, 32 heads,
    # 8 KV heads, 8 experts of FFN 14336, top-2, vocabulary 32,000, 32K context; 46.7B parameters,
    # 12.9B active. The paper gives no batch or token count: 4M-token batches (128 × 32768) and
    # 1T tokens are this preset's assumptions.
    "mixtral-8x7b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 32000,
                     "seq": 32768, "global_batch": 128, "tokens": 1e12, "gated_mlp": True,
                     "tied_embeddings": False, "experts": 8, "top_k": 2, "moe_ffn": 14336, "dropout": False},
    # DeepSeek-V3 (arXiv:2412.19437, section 4.2): 61 layers, 7168 wide, 128 heads of 128, the
    # first 3 layers dense (FFN 18432), then 1 shared + 256 routed experts of width 2048, top-8,
    # vocabulary 129,280, 4K sequences, batch ramped to 15,360 sequences, 14.8T tokens; 671B
    # parameters, 37B active. Multi-head latent attention is approximated as attention with 128
    # query heads of 128 and one KV head (MLA caches one compressed latent per token): +0.5 % of
    # the parameters (674B) and about 10 % more active ones than the paper's figures.
    "deepseek-v3": {"layers": 61, "hidden": 7168, "heads": 128, "kv_heads": 1, "head_dim": 128, "ffn": 18432,
                    "vocab": 129280, "seq": 4096, "global_batch": 15360, "tokens": 14.8e12, "gated_mlp": True,
                    "tied_embeddings": False, "experts": 256, "top_k": 8, "shared_experts": 1, "moe_ffn": 2048,
                    "dense_layers": 3, "dropout": False},
    # PaLM (Chowdhery et al. 2022, arXiv:2204.02311, Table 1): 540B 118 layers, 18432 wide, 48
    # heads of 256, multi-query attention (one KV head), SwiGLU FFN 4 × 18432, shared embeddings,
    # vocabulary 256K; batch ramped to 2048 × 2048, 780B tokens.
    "palm-540b": {"layers": 118, "hidden": 18432, "heads": 48, "kv_heads": 1, "head_dim": 256, "ffn": 73728,
                  "vocab": 256000, "seq": 2048, "global_batch": 2048, "tokens": 780e9, "gated_mlp": True,
                  "parallel_block": True, "dropout": False},
}


def head_dim(model: dict) -> int:
    return int(model.get("head_dim") or model["hidden"] // model["heads"])


def moe_layers(model: dict) -> int:
    """Layers whose MLP is a mixture of experts (0 for a dense model)."""
    return model["layers"] - model.get("dense_layers", 0) if model.get("experts") else 0


def layer_parameters(model: dict) -> tuple[float, float, float]:
    """Parameters of one layer: attention and norms; a dense MLP; every expert of an MoE MLP
    (routed and shared, with the router)."""
    h, heads = model["hidden"], model["heads"]
    kv, hd = model.get("kv_heads", heads), head_dim(model)
    attention = 2 * h * heads * hd + 2 * h * kv * hd + 4 * h
    per_ffn = (3 if model.get("gated_mlp") else 2) * h
    dense = per_ffn * model["ffn"]
    experts = model.get("experts", 0)
    moe = (per_ffn * model.get("moe_ffn", model["ffn"]) * (experts + model.get("shared_experts", 0)) + h * experts
           if experts else 0.0)
    return float(attention), float(dense), float(moe)


def embedding_parameters(model: dict) -> float:
    return float(model["vocab"] * model["hidden"] * (1 if model.get("tied_embeddings", True) else 2))


def parameters(model: dict) -> float:
    """Parameter count from the architecture (or the given `parameters`)."""
    if model.get("parameters"):
        return float(model["parameters"])
    return _counted(model)


def _counted(model: dict) -> float:
    attention, dense, moe = layer_parameters(model)
    L, L_moe = model["layers"], moe_layers(model)
    return L * attention + (L - L_moe) * dense + L_moe * moe + embedding_parameters(model)


def active_parameters(model: dict) -> float:
    """Parameters one token passes through: an MoE layer counts its top-k and shared experts."""
    if not model.get("experts"):
        return parameters(model)
    attention, dense, _ = layer_parameters(model)
    per_ffn = (3 if model.get("gated_mlp") else 2) * model["hidden"]
    active_moe = per_ffn * model.get("moe_ffn", model["ffn"]) * (model["top_k"] + model.get("shared_experts", 0))
    L, L_moe = model["layers"], moe_layers(model)
    return L * attention + (L - L_moe) * dense + L_moe * active_moe + embedding_parameters(model)


def preset(name: str) -> dict:
    """A preset's figures, named."""
    if name not in PRESETS:
        raise WorkloadError(f"unknown workload preset '{name}'; choose from {', '.join(PRESETS)}")
    return {**PRESETS[name], "name": name}


_MOE_ONLY = ("top_k", "shared_experts", "moe_ffn", "dense_layers")


def custom(data: dict, origin: str = "workload") -> dict:
    """A model from a checked inline object (`designer.io.schemas.MODEL`): a preset's figures
    overridden, the missing ones filled in. Refuses what a schema cannot say with a
    `ModelFieldError` naming the field (`origin` names the place)."""
    base = dict(PRESETS[data["preset"]]) if "preset" in data else {}
    model = {**base, **{k: v for k, v in data.items() if k != "preset"}}
    model.setdefault("name", data.get("preset") or "custom")
    if "parameters" in model and not all(k in model for k in ("layers", "hidden")):
        # Only a parameter count: infer a shape with the GPT-3 aspect ratio (h ≈ 128 × layers).
        p = float(model["parameters"])
        layers = max(2, round((p / 12 / 128 ** 2) ** (1 / 3)))
        model.setdefault("layers", layers)
        model.setdefault("hidden", 128 * layers)
    for field in ("layers", "hidden"):
        if field not in model:
            raise ModelFieldError(origin, field, f"missing: a model states {field} (or parameters, or a preset)")
    model.setdefault("heads", max(1, model.get("hidden", 128) // 128))
    model.setdefault("ffn", 4 * model.get("hidden", 128))
    model.setdefault("vocab", 51200)
    model.setdefault("seq", 2048)
    model.setdefault("global_batch", 512)
    model.setdefault("tokens", 300e9)
    model.setdefault("precision", "bf16")

    def refuse(field: str, problem: str):
        raise ModelFieldError(origin, field, problem)

    if "head_dim" not in model and model["hidden"] % model["heads"]:
        refuse("heads", f"hidden ({model['hidden']:,}) must be a multiple of heads ({model['heads']:,}), "
                        "or head_dim must be given")
    if model.get("kv_heads", 1) > model["heads"] or model["heads"] % model.get("kv_heads", 1):
        refuse("kv_heads", f"kv_heads ({model['kv_heads']:,}) must divide heads ({model['heads']:,})")
    experts = model.get("experts", 0)
    if not experts:
        for field in _MOE_ONLY:
            if field in data:
                refuse(field, "is a mixture-of-experts field but the model has no experts (set experts)")
    else:
        if "top_k" not in model:
            refuse("experts", "a mixture-of-experts model needs top_k (experts each token is sent to)")
        if model["top_k"] > experts:
            refuse("top_k", f"top_k ({model['top_k']:,}) is more than the {experts:,} experts")
        if model.get("dense_layers", 0) >= model["layers"]:
            refuse("dense_layers", f"dense_layers ({model['dense_layers']:,}) leaves none of the "
                                   f"{model['layers']:,} layers a mixture of experts")
    if "parameters" in data and ("layers" in data or "hidden" in data):
        counted = _counted(model)
        if abs(float(data["parameters"]) / counted - 1) > 0.25:
            refuse("parameters", f"{float(data['parameters']):,.0f} is more than 25 % from the "
                                 f"{counted:,.0f} the stated shape has")
    return model


def default_preset(accelerators: int) -> str:
    """The default training workload for a design of this size."""
    if accelerators <= 64:
        return "megatron-1.7b"
    if accelerators <= 4096:
        return "llama2-70b"
    return "llama3-405b"
