"""Lint catches what changes the numbers (no Qt): a scale-up link between servers of a platform
whose scale-up domain ends at the server, and an accelerator outside any server (which the engine
leaves out of the network figures while the rest of the design keeps its own)."""


from designer.engine.evaluate import evaluate
from designer.io.examples import example_paths, resolve_design_path
from designer.io.files import load_design
from designer.model.catalog import default_catalog
from designer.model.design import Item, Link
from tests.helpers import two_servers_on_a_leaf


def _errors(result) -> list:
    return [finding for finding in result.lint if finding.severity == "error"]


def test_an_nvlink_cable_between_two_dgx_servers_is_an_error():
    design, _ = two_servers_on_a_leaf()
    assert not _errors(evaluate(design))
    design.add_link(Link("stray-nvlink", "s0.gpu0", "s1.sw0", "nvlink4", 1))
    result = evaluate(design)
    assert result.network.scale_up.domain_accelerators == 16  # what the cable does to the numbers
    [error] = _errors(result)
    assert error.item == "stray-nvlink"
    assert "scale-up fabric" in error.message and "NVIDIA DGX H100 platform" in error.message


def test_a_scale_up_link_from_a_server_to_a_switch_outside_it_is_an_error():
    design, _ = two_servers_on_a_leaf()
    design.add_item(Item("outer", "switch", name="Outer NVSwitch", part="nvswitch-gen3"))
    design.add_link(Link("out-nvlink", "s1.gpu3", "outer", "nvlink4", 2))
    assert [f.item for f in _errors(evaluate(design))] == ["out-nvlink"]


def test_platforms_that_declare_a_multi_server_domain_may_join_servers():
    catalog = default_catalog()
    spans = {p.id: (p.get("scale_up") or {}).get("domain_servers", 1) for p in catalog.of_kind("server")}
    assert spans["tpu-v4-host"] > 1 and spans["dojo-training-tile"] > 1 and spans["supernode-32"] > 1
    assert spans["dgx-h100"] == 1 and spans["gb200-nvl72"] == 1  # the NVL72's domain is the one platform
    for name in ("google-tpu-v4-pod", "tesla-dojo-exapod", "tensorwave-tensornode"):
        result = evaluate(load_design(resolve_design_path(name)))
        assert result.network.scale_up.domain_accelerators > 100 and not _errors(result), name
    for path in example_paths():
        assert not _errors(evaluate(load_design(path))), path.name


def test_a_stray_accelerator_is_an_error_and_the_rest_keeps_its_figures():
    design, _ = two_servers_on_a_leaf()
    before = evaluate(design)
    design.add_item(Item("stray", "accelerator", name="GPU 99", part="h100-sxm", x=2000, y=0))
    after = evaluate(design)
    [error] = _errors(after)
    assert error.item == "stray" and "GPU 99 is not inside a server" in error.message
    assert "left out of the network, collective and training figures" in error.message
    assert not [f for f in after.lint if f.item == "stray" and f.severity != "error"]  # said once
    # The servers keep every figure; the stray chip is still bought and powered.
    assert after.network == before.network
    assert after.collectives == before.collectives
    assert after.training == before.training
    assert after.utilization == before.utilization
    assert after.inventory.accelerators == before.inventory.accelerators + 1
    assert after.power.total_kw > before.power.total_kw
