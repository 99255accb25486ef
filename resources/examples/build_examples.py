"""Regenerate the example gallery (`resources/examples/*.cluster.json`) from the topology
generators and the shipped parts catalogue.

    python resources/examples/build_examples.py [OUTPUT_DIR] [--only ID ...]

Every example is built by `designer.topologies.generate(...)` with parameters, then named,
described and (for a few) post-edited through the Design API: put in racks, replicated, given a
partial unit. No total is typed in: the engine computes every figure from the parts. The shipped
catalogue is used, never the user's, so the files are the same on every machine; re-running the
script rewrites them byte for byte (tests/test_examples.py checks this).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from designer.io.files import save_design  # noqa: E402 - after the sys.path entry above
from designer.model.catalog import Catalog, load_catalog  # noqa: E402 - after the sys.path entry above
from designer.model.design import Design, Item  # noqa: E402 - after the sys.path entry above
from designer.model.layout import tidy_in_place  # noqa: E402 - after the sys.path entry above
from designer.topologies import generate  # noqa: E402 - after the sys.path entry above
from designer.topologies.base import with_storage_and_spares  # noqa: E402

H100_RACK = ("Racks: 4 servers per 42U rack provisioned for 40.8 kW, NVIDIA's guidance for DGX/HGX H100 "
             "(docs/hardware.md); the switches' racks are not drawn.")


def _replicate(design: Design, server_id: str, count: int, per_rack: int, rack: str) -> Design:
    """Turn a one-server design into `count` servers in racks of `per_rack` (count % per_rack == 0)."""
    assert count % per_rack == 0, (count, per_rack)
    racks = count // per_rack
    parent = None
    if racks > 1:
        design.add_item(Item("racks", "group", name=f"{racks} racks", count=racks, y=200))
        parent = "racks"
    design.add_item(Item("rack", "rack", name="Rack", part=rack, parent=parent))
    parent = "rack"
    if per_rack > 1:
        design.add_item(Item("servers", "group", name=f"{per_rack} servers", count=per_rack, parent="rack"))
        parent = "servers"
    design.update_item(server_id, parent=parent)
    _edited(design, f"replicated to {count} servers in racks of {per_rack} ({rack}) by build_examples.py")
    return design


def _edited(design: Design, what: str) -> None:
    """Record on the template settings that the design was changed after generation."""
    template = design.settings.get("template")
    if template is not None:
        template["edited"] = "; ".join(filter(None, [template.get("edited"), what]))


def _describe(design: Design, name: str, *paragraphs: str) -> Design:
    design.name = name
    design.description = "\n\n".join(p.strip() for p in paragraphs if p)
    return design


# --- the examples ------------------------------------------------------------------------------

def nvidia_superpod_h100_4su(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="dgx-h100", nodes=128, nodes_per_su=32, switch="qm9700",
                 rack="rack-42u-superpod", servers_per_rack=4)
    return _describe(
        d, "NVIDIA DGX SuperPOD H100, 4 scalable units",
        """NVIDIA's reference architecture for DGX H100: 4 scalable units (SUs) of 32 DGX H100 on a
        rail-optimized, non-blocking two-tier Quantum-2 NDR InfiniBand fabric (GPU i of every DGX
        on leaf i of its SU). 128 DGX, 1,024 H100.""",
        """Public figures (docs.nvidia.com/dgx-superpod, reference architecture for H100, via
        docs/hardware.md): 32 slots per SU, 8 leaf + 4 spine QM9700 per SU; 4 SUs = 127 DGX (1,016 GPUs),
        32 leaf + 16 spine switches, 38 racks.""",
        """Assumptions: all 4 × 32 slots hold a DGX (128 DGX, 1,024 GPUs); the reference puts the
        Unified Fabric Manager appliance in one slot, giving 127 DGX, which is not modelled. The
        generator reproduces the 32 leaf + 16 spine QM9700 (each leaf: 32 down, 2 × 16 up). Only the
        compute fabric is drawn (no storage or in-band management networks, no UFM). """ + H100_RACK)


def tesla_h100_2023(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="hgx-h100", nodes=1250, nodes_per_su=32, switch="qm9700",
                 rack="rack-42u-superpod", servers_per_rack=4)
    return _describe(
        d, "Tesla H100 cluster (2023)",
        """Tesla's AI training cluster brought up in 2023: 10,000 NVIDIA H100 in 1,250 8-GPU HGX
        servers.""",
        """Public figures (docs/reference-clusters.md, row 1): 10,000 H100; 340 FP64 PFLOPS peak (10,000 × 34
        TF, the FP64 vector figure); 39.58 INT8 exaOPS peak (10,000 × 3,958 TOPS with sparsity).""",
        """Assumptions: the network is not public. The example follows NVIDIA's DGX SuperPOD
        reference architecture: HGX H100 servers with 8 × 400 Gb/s ConnectX-7 NDR (one per GPU),
        rail-optimized non-blocking Quantum-2 fabric in 39 scalable units of 32 servers plus one
        partial unit of 2 (1,250 = 39 × 32 + 2); three tiers (8 spines per unit, 8 core groups of 32).
        Server power and height are the DGX H100's. """ + H100_RACK)


def tesla_a100_2021(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="hgx-a100-8", nodes=720, nodes_per_su=20, switch="qm8700",
                 rack="rack-42u", servers_per_rack=4)
    return _describe(
        d, "Tesla A100 cluster (2021)",
        """Tesla's pre-Dojo training cluster shown at CVPR 2021: 720 nodes of 8 × A100 80 GB
        (5,760 GPUs).""",
        """Public figures (docs/reference-clusters.md, row 2): 5,760 A100 in 720 nodes; "over 1.8 EFLOPS"
        (720 × 8 × 312 TF BF16/FP16 dense = 1.80 EF); 10 PB of storage (not modelled).""",
        """Assumptions: the fabric is not public. The example follows NVIDIA's DGX SuperPOD A100
        reference architecture: HGX A100 servers with 8 × 200 Gb/s HDR ConnectX-6, scalable units of
        20 servers on a rail-optimized non-blocking Quantum QM8700 fabric (36 units, three tiers).
        Server power, height and CPUs are the DGX A100's (catalogue note). 4 servers (26 kW) per
        42U air-cooled 30 kW rack. Storage is not drawn.""")


def tesla_dojo_exapod(catalog: Catalog) -> Design:
    d = generate("torus", catalog, platform="dojo-training-tile", gpu="dojo-d1", dims="50x60", wrap=0,
                 host_block="5x5", rack="rack-nvl72", hosts_per_rack=12)
    for item in [i for i in d.items.values() if i.kind in ("server", "rack")]:
        d.update_item(item.id, name=item.name.replace("Host", "Tile").replace("Rack", "Cabinet"))
    return _describe(
        d, "Tesla Dojo ExaPOD (2022)",
        """Tesla's Dojo ExaPOD: 120 training tiles of 25 D1 chips (3,000 D1). The tiles are joined
        edge to edge, so the chips form one 2D mesh: here 10 × 12 tiles of 5 × 5 chips = a 50 × 60
        mesh with open edges, in 10 cabinets of 12 tiles.""",
        """Public figures (docs/reference-clusters.md, row 3; Tesla AI Day 2021/2022): 120 tiles, 3,000 D1
        (25 per tile); 1.1 EFLOPS BF16/CFP8 (3,000 × 362 TF = 1.09 EF); 13 TB SRAM; 1.3 TB HBM;
        9 TB/s per tile edge; 10 cabinets. The HBM sits in the Dojo Interface Processors, which are
        not catalogued, so it is not counted; the engine's SRAM total is 3,000 × 442.5 MB = 1.33 TB,
        not Tesla's 13 TB.""",
        """Assumptions: the tiles tile a 10 × 12 grid; a D1's 576 SerDes lanes are shared over its 4
        edges (144 lanes, about 2 TB/s per direction to each neighbour, so 10 TB/s across a tile
        edge; Tesla quotes 9 TB/s). Every chip is drawn (3,000 chips, the largest example by item
        count) because a mesh cannot be folded into replicated groups. The Dojo Interface
        Processors, hosts and the Z-plane Ethernet are not catalogued and not drawn. Cabinets are
        drawn as the catalogue's 120 kW rack with 12 tiles each (Tesla's 10 cabinets): 12 × 15 kW =
        180 kW, so lint warns of each cabinet that it draws 180.0 kW, over its 120 kW power budget:
        expected, since Dojo cabinets are Tesla's own high-density design, not a catalogued rack.""")


def microsoft_openai_2020(catalog: Catalog) -> Design:
    d = generate("fat-tree", catalog, platform="hgx-v100", nodes=1250, switch="qm8700", rack="rack-42u",
                 servers_per_rack=5)
    return _describe(
        d, "Microsoft / OpenAI supercomputer (2020)",
        """The Azure supercomputer Microsoft built for OpenAI in 2020: 10,000 V100 GPUs in 1,250
        8-GPU servers with 400 Gb/s of network per GPU server.""",
        """Public figures (docs/reference-clusters.md, row 4; Microsoft, May 2020): over 285,000 CPU cores;
        10,000 GPUs; 400 Gb/s network connectivity per GPU server.""",
        """Assumptions: servers are DGX-1-class 8 × V100 SXM2 with 2 × 200 Gb/s HDR ConnectX-6
        (400 Gb/s per server); the fabric is a non-blocking three-tier fat tree of Quantum QM8700
        (topology not public). The 285,000 CPU cores include CPU-only servers that are not drawn
        (the GPU servers here have 1,250 × 2 × 20 = 50,000 cores). 5 servers (17.5 kW) per 42U
        air-cooled rack. The ConnectX-6 is a PCIe Gen4 card; in this Gen3 server its
        host link runs at Gen3 x16 (about 15.8 GB/s per direction), below the 25 GB/s of its HDR
        port, and the design draws it so.""")


def azure_nd_h100_v5(catalog: Catalog) -> Design:
    d = generate("fat-tree", catalog, platform="hgx-h100", nodes=256, switch="qm9700", tiers=2,
                 rack="rack-42u-superpod", servers_per_rack=4)
    return _describe(
        d, "Azure ND H100 v5 (2,048 GPUs)",
        """Azure's ND H100 v5 virtual machines: 8 H100 per VM on NVSwitch/NVLink 4, one 400 Gb/s
        Quantum-2 ConnectX-7 InfiniBand link per GPU on a non-blocking fat tree. Shown at 256 VMs
        (2,048 GPUs) on a two-tier QM9700 fat tree.""",
        """Public figures (docs/reference-clusters.md, row 5; MicrosoftDocs azure-docs nd-h100-v5-series):
        3.2 Tb/s of InfiniBand per VM (8 × 400 Gb/s); 3.6 TB/s NVLink bisection inside the VM
        (4 GPUs × 18 NVLinks × 50 GB/s); PCIe Gen5 64 GB/s per GPU; non-blocking (1:1) fat tree;
        scales from 8 to thousands of GPUs.""",
        """Assumptions: 256 VMs is a size chosen to show the fabric (the public record gives no
        fixed size); a plain (not rail-optimized) fat tree, 4 VMs per leaf (32 ports down, 32 up),
        64 leaves and 32 spines. The server is the generic HGX H100 with DGX H100 power and
        height. """ + H100_RACK)


def google_tpu_v4_pod(catalog: Catalog) -> Design:
    d = generate("torus", catalog, dims="16x16x16", block="4x4x4", rack="rack-42u")
    return _describe(
        d, "Google TPU v4 pod",
        """One TPU v4 pod: 4,096 chips in 64 racks, each rack a 4 × 4 × 4 cube of chips (16 hosts
        of 4), the cubes' faces joined through 48 optical circuit switches into a 16 × 16 × 16 3D
        torus.""",
        """Public figures (docs/reference-clusters.md, row 6; docs.cloud.google.com/tpu/docs/v4; hpcwire
        2023-04-10): 4,096 chips, 64 racks, 48 OCS, 6,144 optical links, 275 TF BF16 per chip =
        1.13 EF per pod; Google's Cloud ML cluster of 8 pods is quoted at about 9 EFLOPS (8 × 1.13).""",
        """Assumptions: the OCS are configured for the full 16 × 16 × 16 torus (each OCS serves one
        face position along one axis of every cube); host CPUs and data-centre NICs are not in the
        catalogue and not drawn; the OCS chassis take no rack space here (height not public). Chip
        power is the measured mean (170 W), so a rack draws about 11 kW within a 42U, 30 kW
        rack.""")


def google_a3(catalog: Catalog) -> Design:
    switch = "sn5600-200g"
    d = generate("rail-fat-tree", catalog, platform="hgx-h100", nic="ipu-200g", nics_per_node=8, nodes=3250,
                 nodes_per_su=125, switch=switch, rack="rack-48u", servers_per_rack=5)
    note = (f"Google's Jupiter data-centre fabric is not public or catalogued; the scale-out network is drawn "
            f"as a rail-optimized, non-blocking fabric of {catalog[switch].name} switches, one 200G port "
            "for each IPU's 200 GbE, as a stand-in with the same per-GPU bandwidth. Scalable units of 125 "
            "servers (the most of 3,250 in even units a leaf's 128 ports down take) make it two tiers: "
            "26,000 ports are within the 32,768 that 256-port switches join in two.")
    return _describe(
        d, "Google Cloud A3 supercomputer",
        """Google Cloud's A3 supercomputer: about 26,000 H100 in 3,250 A3 VMs of 8 H100 on
        NVSwitch, each GPU with its own 200 Gb/s IPU (Mount Evans) for GPU-to-GPU traffic.""",
        """Public figures (docs/reference-clusters.md, row 7; Google Cloud, May 2023): about 26,000 H100; up
        to 26 EFLOPS of AI performance (26,000 × 989.4 TF BF16 dense = 25.7 EF); 200 Gb/s IPU per
        GPU (1.6 Tb/s per VM).""",
        note,
        """Assumptions: the A3 host is the generic HGX H100 with DGX H100 power and height; 5
        servers (51 kW) per 48U liquid-cooled 60 kW rack (rack layout not public).""")


def meta_2017_v100(catalog: Catalog) -> Design:
    d = generate("fat-tree", catalog, platform="hgx-v100", nodes=2750, switch="qm8700", rack="rack-42u",
                 servers_per_rack=5)
    return _describe(
        d, "Meta AI research cluster (2017)",
        """The AI research cluster Meta (then Facebook) designed in 2017: 22,000 NVIDIA V100 in a
        single cluster, here 2,750 8-GPU servers on a three-tier fat tree.""",
        """Public figures (docs/reference-clusters.md, row 8; Meta's RSC announcement, January 2022): 22,000
        V100 GPUs.""",
        """Assumptions: the servers and network are not in the public record. Servers are DGX-1
        class 8 × V100 SXM2 (Big Basin-like) with 2 × 200 Gb/s HDR ConnectX-6; the catalogue has no
        100 Gb/s EDR parts of the time, so the fabric is a non-blocking three-tier fat tree of
        Quantum QM8700 (HDR), faster than what was installed in 2017. 5 servers (17.5 kW) per 42U
        air-cooled rack. The ConnectX-6 is a PCIe Gen4 card; in this Gen3 server its
        host link runs at Gen3 x16 (about 15.8 GB/s per direction), below the 25 GB/s of its HDR
        port, and the design draws it so.""")


def meta_rsc_phase1(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="dgx-a100", nodes=760, nodes_per_su=20, switch="qm8700",
                 rack="rack-42u", servers_per_rack=4)
    return _describe(
        d, "Meta Research SuperCluster, phase 1 (2022)",
        """Meta's AI Research SuperCluster (RSC) as announced in January 2022: 760 NVIDIA DGX A100
        (6,080 A100) on a 200 Gb/s HDR InfiniBand fabric with no oversubscription.""",
        """Public figures (docs/reference-clusters.md, row 9): 760 DGX A100 = 6,080 GPUs; 200 Gb/s InfiniBand
        per GPU (8 × ConnectX-6 per DGX, 1,600 Gb/s per node); 1,895 PF TF32 (NVIDIA's figure, with
        sparsity: 6,080 × 312 TF = 1.897 EF).""",
        """Assumptions: Meta describes a two-level Clos, which at this size needs director-class
        switches that are not catalogued. The example follows NVIDIA's DGX SuperPOD A100 reference
        architecture instead: scalable units of 20 DGX, rail-optimized and non-blocking, built from
        1U QM8700 in three tiers (38 units: 304 leaves, 380 spines, 160 cores). 4 DGX A100 (26 kW)
        per 42U air-cooled rack. Storage is not drawn.""")


def meta_rsc_phase2(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="dgx-a100", nodes=2000, nodes_per_su=20, switch="qm8700",
                 rack="rack-42u", servers_per_rack=4)
    return _describe(
        d, "Meta Research SuperCluster, phase 2",
        """Meta's RSC at full build-out: 2,000 DGX A100 (16,000 A100) on HDR InfiniBand.""",
        """Public figures (docs/reference-clusters.md, row 10; Meta, January 2022): 2,000 DGX A100 = 16,000
        GPUs; 1 EB of storage and 16 TB/s of training data to the GPUs (storage not modelled).""",
        """Assumptions: as phase 1 (DGX SuperPOD A100 scalable units of 20 DGX, 200 Gb/s HDR per
        GPU, non-blocking). 100 units exceed what a 40-port core switch can reach, so the three
        tiers are built as a k-ary fat tree with rail-aligned pods: rail r of 20 units is one pod
        with 20 spines, and spine j of all 40 pods meets core group j of 20 switches. With 40-port
        QM8700 that is exactly the k = 40 fat tree for 16,000 endpoints: 800 leaves, 800 spines,
        400 cores. 4 DGX A100 per 42U air-cooled rack.""")


def aws_p5_ultracluster(catalog: Catalog) -> Design:
    switch = "sn5600-200g"
    d = generate("rail-fat-tree", catalog, platform="hgx-h100", nic="efa-v2", nics_per_node=32, nodes=2500,
                 nodes_per_su=100, switch=switch, rack="rack-42u-superpod", servers_per_rack=4)
    note = (f"AWS's UltraCluster switches are not public or catalogued; the scale-out network is drawn as a "
            f"rail-optimized, non-blocking fabric of {catalog[switch].name} switches, each 100 GbE EFA link "
            "on one of a switch's 256 ports, as a stand-in with the same 3,200 Gb/s per instance. Scalable "
            "units of 100 servers: a rail leaf takes 100 links down and 100 up of its 256 ports (125 servers "
            "would fill more of them, but 125 uplinks divide over a unit's spines only as 125 spines of one "
            "link each, so it takes more switches).")
    return _describe(
        d, "AWS EC2 P5 UltraCluster (20,000 H100)",
        """An EC2 UltraCluster of 2,500 p5.48xlarge instances: 8 H100 each on NVSwitch, 32 EFA
        network cards of 100 Gb/s per instance (3,200 Gb/s) with GPUDirect RDMA.""",
        """Public figures (docs/reference-clusters.md, row 11; AWS, July 2023): per instance 8 H100, 640 GB
        HBM, 2 TB host memory, 30 TB NVMe, 3,200 Gb/s EFA; UltraClusters up to 20,000 H100
        (20,000 × 989.4 TF = 19.8 EF BF16 dense).""",
        note,
        """Assumptions: the instance is the generic HGX H100 (DGX H100 power, height and CPUs);
        host memory and NVMe are not modelled. """ + H100_RACK)


def aws_p4de(catalog: Catalog) -> Design:
    d = generate("server", catalog, platform="hgx-a100-8", nic="efa-v2", nics_per_node=4)
    return _describe(
        d, "AWS EC2 P4de instance",
        """One p4de.24xlarge: 8 A100 80 GB on NVSwitch (HGX A100) with 400 Gb/s of EFA.""",
        """Public figures (docs/reference-clusters.md, row 12; AWS): 8 × A100 80 GB HBM2e = 640 GB of HBM per
        instance; 400 Gb/s EFA (4 × 100 Gb/s).""",
        """Assumptions: the platform's power, height and CPUs are the DGX A100's (the P4de's own are
        not public); the 4 EFA cards are PCIe Gen5 parts running at Gen4 x16 in this server; a single
        instance, so no scale-out fabric is drawn.""")


def coreweave_inflection_h100(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="hgx-h100", nodes=2750, nodes_per_su=25, switch="qm9700",
                 rack="rack-48u", servers_per_rack=5)
    return _describe(
        d, "CoreWeave / Inflection AI H100 cluster",
        """The cluster CoreWeave built for Inflection AI in 2023: 22,000 H100 in 2,750 HGX servers
        on NVIDIA Quantum-2 InfiniBand.""",
        """Public figures (docs/reference-clusters.md, row 13): 22,000 H100; 22 EFLOPS at 16-bit precision
        (22,000 × 989.4 TF dense = 21.8 EF).""",
        """Assumptions: the fabric layout is not public; it follows NVIDIA's rail-optimized
        reference: 8 × 400 Gb/s ConnectX-7 NDR per server, non-blocking. 2,750 servers = 110 units
        of 25; that many units exceed a 64-port core's reach, so the three tiers are a k-ary fat
        tree with rail-aligned pods (rail r of 22 units is one pod with 25 spines; spine j of all 40
        pods meets core group j). 5 servers (51 kW) per 48U direct-liquid-cooled 60 kW rack.""")


def gigaio_supernode(catalog: Catalog) -> Design:
    d = _replicate(generate("pcie-fabric", catalog, platform="supernode-32", nodes=1), "node", 1, 1, "rack-42u")
    return _describe(
        d, "GigaIO SuperNODE (32 GPUs)",
        """GigaIO's SuperNODE: 32 accelerators attached to one host over a PCIe Gen5 composable
        memory fabric (FabreX switches); the SuperDuperNODE doubles it to 64 (catalogue platform
        supernode-64).""",
        """Public figures (docs/reference-clusters.md, row 14): 32 GPUs in a single node on a PCIe Gen5
        FabreX memory fabric; 64 in the SuperDuperNODE.""",
        """Assumptions: the accelerator is the MI300X (the GPU the reference names for the
        architecture at scale); FabreX port counts and latency are not public, so the catalogue
        assumes 2 switches of 24 × x16 ports (16 GPUs on each, joined by an x32 link); host is
        2 × EPYC 9654; 20U in one 42U rack. Power is the GPUs' and CPUs' only (a floor: 24.7 kW,
        within the rack's 30 kW).""")


def tensorwave_tensornode(catalog: Catalog) -> Design:
    d = generate("pcie-fabric", catalog, platform="supernode-32", nodes=180)
    # One SuperNODE (20U, 24.7 kW) per 42U air-cooled 30 kW rack.
    node = d.items["node"]
    d.add_item(Item("node-rack", "rack", name="Rack", part="rack-42u", parent=node.parent, x=node.x, y=node.y))
    d.update_item("node", parent="node-rack")
    _edited(d, "each node put in its own rack-42u by build_examples.py")
    return _describe(
        d, "TensorWave TensorNODE (5,760 MI300X)",
        """TensorWave's TensorNODE: GigaIO's SuperNODE architecture at scale, all-AMD (4th-gen EPYC
        hosts, MI300X with 192 GB HBM3), 5,760 GPUs in one FabreX PCIe memory domain where every
        GPU can reach every other GPU's memory: 180 SuperNODEs of 32 under a three-tier FabreX
        switch fabric.""",
        """Public figures (docs/reference-clusters.md, row 15): up to 5,760 GPUs in one FabreX domain; more
        than 1 PB of pooled VRAM (5,760 × 192 GB = 1.11 PB).""",
        """Assumptions: the fabric's switch counts and layout are not public. Each SuperNODE's two
        24-port FabreX switches keep 6 x16 ports for the fabric; 180 nodes need three tiers: pods
        of 9 SuperNODEs under 6 pod switches (18 ports down, 6 up: 3:1), pod switch j of every pod
        under spine group j. One SuperNODE (20U; 24.7 kW, the GPUs' and CPUs' power only) per 42U
        air-cooled 30 kW rack; the fabric switches' racks are not drawn.""")


def tencent_hcc_h800(catalog: Catalog) -> Design:
    d = generate("rail-fat-tree", catalog, platform="hgx-h800", nodes=256, nodes_per_su=32, switch="sn5600-400g",
                 rack="rack-42u-superpod", servers_per_rack=4)
    return _describe(
        d, "Tencent Cloud HCC (H800, 2,048 GPUs)",
        """Tencent Cloud's High-Performance Computing Cluster for AI: HGX H800 servers with 3.2 Tb/s
        of RDMA network per server (8 × 400 GbE RoCE, one per GPU), here 256 servers (2,048 GPUs)
        on a rail-optimized two-tier Spectrum-4 Ethernet fabric.""",
        """Public figures (docs/reference-clusters.md, row 16; Tencent Cloud, 2023): H800 GPUs, 3.2 Tb/s
        interconnect per server.""",
        """Assumptions: the cluster size and switch model are not in the reference; 256 servers in
        8 scalable units of 32 is a size chosen to show one non-blocking two-tier block. Each
        SN5600's 64 × 800G cages are split into 128 × 400G ports (sn5600-400g), one for each
        400 GbE link. H800's FP64 is the export-limited 1 TF (disputed, catalogue note). """ + H100_RACK)


def frontier_mi250x(catalog: Catalog) -> Design:
    d = generate("dragonfly", catalog, platform="mi250x-node", nic="slingshot-11-cassini", nodes=9408,
                 switch="slingshot-rosetta", global_ports_per_switch=16, links_per_pair=4)
    return _describe(
        d, "Frontier (HPE Slingshot dragonfly, 37,632 MI250X)",
        """ORNL's Frontier exascale system: 9,408 HPE Cray EX235a nodes of 4 AMD Instinct MI250X
        (37,632 GPUs) on Infinity Fabric inside the node, joined by an HPE Slingshot 11 dragonfly.""",
        """Public figures (docs/reference-clusters.md, row 17; glennklockwood.com/garden/systems/frontier;
        HPCwire, May 2022): 9,408 nodes and 37,632 MI250X in 74 cabinets; 4 Slingshot 11 NICs
        (200 Gb/s, Cassini) per node; each cabinet is one dragonfly group of 128 nodes under 32
        Rosetta switches (64 x 200G: 16 ports to NICs, 31 to the other switches of the group, up
        to 16 to other groups), with 4 global links between every two groups. 9,408 nodes fill 73
        cabinets and half of the 74th, so the last group is a partial group of 64 nodes on its 32
        switches (2 nodes each: a half-filled cabinet keeps its switch blades), with the full 4
        global links to every other group. Sources of the parts: De Sensi et al., "An
        In-Depth Analysis of the Slingshot Interconnect", SC20; docs/hardware.md (HPE Slingshot).""",
        """Assumptions: a node's 4 NICs go to one switch (4 nodes per switch). A Cray EX chassis
        holds 16 nodes and 4 switch blades (glennklockwood.com/garden/cray-ex), so its nodes' NICs
        may instead be spread over the chassis's 4 switches; no source found says which. Spreading
        them would change the paths inside a group, not the global links between groups. The
        global links are drawn to one bundle (dragonfly-global-links, a cable bundle: the bill of
        materials counts each global cable once, 10,804 for 74 groups).
        Each group is drawn in its Cray EX cabinet (cray-ex-cabinet: 74 cabinets), so the cables
        inside a cabinet are copper and the global ones optical, as the cabinets are cabled.
        Frontier's EPYC host CPU is not catalogued; node height (1U) and power (the GPUs' only,
        2.24 kW) are catalogue assumptions. The Cassini NIC is taken as PCIe Gen4 x16 beside the
        MI250X.""")


def cerebras_cg1(catalog: Catalog) -> Design:
    d = _replicate(generate("server", catalog, platform="cs-2-system"), "node", 64, 2, "rack-48u")
    d.update_item("node.gpu0", name="WSE-2 wafer")
    return _describe(
        d, "Cerebras Condor Galaxy 1",
        """Condor Galaxy 1 (Cerebras and G42, 2023): 64 Cerebras CS-2 systems, one wafer-scale
        engine each, in one Wafer-Scale Cluster with weights streamed from MemoryX servers.""",
        """Public figures (docs/reference-clusters.md, row 18; cerebras.net "Introducing Condor Galaxy 1";
        eenewseurope.com): 64 CS-2, 54 million cores, 82 TB parameter memory, 388 Tb/s internal
        bandwidth, 4 EFLOPS FP16 (62.5 PF per CS-2 is derived from that total: catalogue note).""",
        """Assumptions: each CS-2's 12 × 100 GbE links go to the SwarmX broadcast/reduce fabric and
        MemoryX servers, which are not catalogued (nor is a 100 GbE switch), so the cluster network
        is NOT drawn (lint therefore warns that the wafer has no link to any other part). A CS-2
        draws up to 23 kW (catalogue): 2 CS-2 (15U each, 46 kW) per 48U liquid-cooled rack of 60 kW.""")


EXAMPLES = {
    "nvidia-superpod-h100-4su": nvidia_superpod_h100_4su,
    "tesla-h100-2023": tesla_h100_2023,
    "tesla-a100-2021": tesla_a100_2021,
    "tesla-dojo-exapod": tesla_dojo_exapod,
    "microsoft-openai-2020": microsoft_openai_2020,
    "azure-nd-h100-v5": azure_nd_h100_v5,
    "google-tpu-v4-pod": google_tpu_v4_pod,
    "google-a3": google_a3,
    "meta-2017-v100": meta_2017_v100,
    "meta-rsc-phase1": meta_rsc_phase1,
    "meta-rsc-phase2": meta_rsc_phase2,
    "aws-p5-ultracluster": aws_p5_ultracluster,
    "aws-p4de": aws_p4de,
    "coreweave-inflection-h100": coreweave_inflection_h100,
    "gigaio-supernode": gigaio_supernode,
    "tensorwave-tensornode": tensorwave_tensornode,
    "tencent-hcc-h800": tencent_hcc_h800,
    "frontier-mi250x": frontier_mi250x,
    "cerebras-cg1": cerebras_cg1,
}


def _unwrapped(text: str) -> str:
    """Join the wrapped lines of each paragraph."""
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))


def build(example_id: str, catalog: Catalog | None = None) -> Design:
    catalog = catalog or load_catalog(include_user=False)
    design = with_storage_and_spares(EXAMPLES[example_id](catalog), resize=True)  # examples change generated designs
    design.description = _unwrapped(design.description)
    return tidy_in_place(design)  # the generators' designs are tidy; the edits above may not be


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", nargs="?", default=str(HERE), help="where to write (default: this folder)")
    parser.add_argument("--only", nargs="*", metavar="ID", help="build only these examples")
    args = parser.parse_args(argv)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog(include_user=False)
    for example_id in args.only or EXAMPLES:
        design = build(example_id, catalog)
        path = out / f"{example_id}.cluster.json"
        save_design(design, path, backup=False)
        print(f"wrote {path} ({path.stat().st_size:,} bytes, {len(design.items)} items, {len(design.links)} links)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
