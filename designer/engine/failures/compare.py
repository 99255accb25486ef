"""The healthy and degraded figures side by side (`sections.Comparison` rows of `Degraded`).
"""

from __future__ import annotations

from designer.engine.result import Result, rounded
from designer.engine.sections import Comparison, Network


def _worst_oversubscription(network: Network) -> float | None:
    if network.scale_out is None:
        return None
    ratios = [level.oversubscription for level in network.scale_out.oversubscription if level.oversubscription]
    return max(ratios) if ratios else None


def _largest_collective(result: Result):
    rows = [r for r in result.collectives if r.algorithm == "auto"] or list(result.collectives)
    return max(rows, key=lambda r: r.bytes) if rows else None


def comparisons(healthy: Result, degraded: Result, degraded_bisection: float | None) -> tuple[Comparison, ...]:
    """Each compared figure, healthy next to degraded; `degraded_bisection` is the degraded
    design's scale-out bisection (`uneven_bisection`)."""
    h_net, d_net = healthy.network, degraded.network
    h_bis = h_net.scale_out.bisection_gb_per_s if h_net.scale_out else None
    h_row, d_row = _largest_collective(healthy), _largest_collective(degraded)
    h_tr, d_tr = healthy.training, degraded.training
    # With no accelerator left no job runs: what is left still fails, but interrupts nothing.
    h_gp, d_gp = healthy.goodput, degraded.goodput if d_net.accelerators else None

    def out_of(network: Network, name: str):
        return getattr(network.scale_out, name) if network.scale_out else None

    rows = [
        ("Accelerators in the job", "", h_net.accelerators, d_net.accelerators),
        ("Scale-out bisection", "GB/s", h_bis, rounded(degraded_bisection)),
        ("Scale-up domain bisection", "GB/s", h_net.scale_up.bisection_gb_per_s if h_net.scale_up else None,
         d_net.scale_up.bisection_gb_per_s if d_net.scale_up else None),
        ("Worst oversubscription", ":1", _worst_oversubscription(h_net), _worst_oversubscription(d_net)),
        ("Scale-out injection per accelerator (achieved)", "GB/s", out_of(h_net, "achieved_injection_gb_per_s"),
         out_of(d_net, "achieved_injection_gb_per_s")),
    ]
    if h_row is not None:
        label = f"{h_row.op} {h_row.bytes / 2 ** 30:g} GiB time"
        rows.append((label, "s", h_row.time_s, d_row.time_s if d_row is not None else None))
        rows.append((f"{h_row.op} {h_row.bytes / 2 ** 30:g} GiB bus bandwidth", "GB/s", h_row.busbw_gb_per_s,
                     d_row.busbw_gb_per_s if d_row is not None else None))
    rows += [
        ("Training step time", "s", h_tr.step_time_s, d_tr.step_time_s),
        ("Tokens per second", "tokens/s", h_tr.tokens_per_s, d_tr.tokens_per_s),
        ("MFU", "", h_tr.mfu, d_tr.mfu),
        ("Days to train (no failures)", "days", h_tr.days, d_tr.days),
        ("Interruptions per day", "/day", h_gp.interruptions_per_day if h_gp else None,
         d_gp.interruptions_per_day if d_gp else None),
        ("Effective training time ratio", "", h_gp.effective_ratio if h_gp else None,
         d_gp.effective_ratio if d_gp else None),
        ("Days to train (with failures)", "days", h_gp.days if h_gp else None, d_gp.days if d_gp else None),
    ]
    return tuple(Comparison(name, unit, h, d) for name, unit, h, d in rows)
