"""How big a fat tree of given switches can be, and which parts follow from the ones a user named.

A non-blocking fat tree of k-port switches joins at most k/2 server ports per leaf, k²/2 in two
tiers (k leaves under k/2 spines) and k³/4 in three (k pods of k/2 leaves, k²/4 cores). Leaves
oversubscribed o:1 give k·o/(o+1) ports down and k/(o+1) up, which scales both figures by
2o/(o+1); the spine and core tiers stay non-blocking. The generators refuse a size only past these
limits (or past what their scalable units can reach of them), saying so in these words."""

from __future__ import annotations

from dataclasses import dataclass

from designer.model.catalog import Catalog, Part
from designer.model.placement import fits_platform
from designer.topologies.base import TopologyError

DEFAULT_PLATFORM = "dgx-h100"
TIER_WORDS = {2: "two", 3: "three"}


def leaf_downlinks(ports: int, oversubscription: float) -> int:
    """Server ports a leaf takes at this oversubscription (k/2 when non-blocking)."""
    return int(ports * oversubscription // (oversubscription + 1))


def most_ports(ports: int, oversubscription: float, tiers: int) -> int:
    """Server ports a fat tree of `tiers` tiers of `ports`-port switches joins at most."""
    leaves = ports if tiers == 2 else ports * (ports // 2)
    return leaves * leaf_downlinks(ports, oversubscription)


def check_size(template: str, needed: int, ports: int, oversubscription: float, tiers: int) -> None:
    """Refuse `needed` server ports above the physical limit of `tiers` tiers, naming it."""
    limit = most_ports(ports, oversubscription, tiers)
    if needed > limit:
        ratio = f" at {oversubscription:g}:1" if oversubscription != 1 else ""
        more = "; use a switch with more ports" + ("" if tiers == 3 else ", three tiers") + \
            ", more oversubscription or fewer nodes"
        raise TopologyError(f"{template}: {limit:,} ports is the most a {TIER_WORDS[tiers]}-tier fabric of "
                            f"{ports}-port switches{ratio} can join; this design needs {needed:,}{more}")


@dataclass(frozen=True)
class Units:
    """Servers (or leaf blocks, units) in `full` units of `size` and, where the count does not divide, one
    partial unit of `rest` (0: none)."""

    size: int
    full: int
    rest: int

    @property
    def count(self) -> int:
        return self.full + (1 if self.rest else 0)


def split(count: int, most: int) -> Units:
    """`count` things in units of at most `most`: full units and a partial last one."""
    if count <= most:
        return Units(count, 1, 0)
    full, rest = divmod(count, most)
    return Units(most, full, rest)


def even_split(count: int, most: int, least: int = 1) -> Units | None:
    """`count` things in equal units of the largest size from `least` to `most` that divides it."""
    size = next((d for d in range(min(count, most), max(1, least) - 1, -1) if count % d == 0), None)
    return Units(size, count // size, 0) if size is not None else None


# --- defaults that follow the parts named ---------------------------------------------------------------

def platform_for(catalog: Catalog, gpu: str | None) -> str:
    """The server platform for an accelerator: the first by id whose default it is (DGX before
    HGX), else the first whose scale-up fabric it speaks; without an accelerator, DGX H100."""
    if gpu is None:
        return DEFAULT_PLATFORM
    servers = sorted(catalog.of_kind("server"), key=lambda s: s.id)
    chosen = next((s for s in servers if s.get("default_accelerator") == gpu), None) or next(
        (s for s in servers if s.number("accelerator_slots") > 0 and fits_platform(catalog, catalog[gpu], s)), None)
    if chosen is None:
        raise TopologyError(f"no server platform in the catalogue carries '{gpu}'; set parameter 'platform'")
    return chosen.id


def network_media(catalog: Catalog, nic: Part) -> list[str]:
    """A NIC's scale-out media, its own first (InfiniBand NDR, then the Ethernet under EFA...)."""
    return [m for m in nic.media if catalog.get(m) is not None and catalog[m].get("tier") == "scale-out"]


def switch_for(catalog: Catalog, nic_id: str) -> str:
    """The switch for a NIC: one taking the NIC's own medium on ports of the NIC's speed, else the
    slowest faster ports (a slower link takes a whole port, so a 100 GbE card goes to the 256 ×
    200G split of a switch rather than to its 128 × 400G one), the highest radix of those; else
    the same on another of its network media. Only packet switches a rack holds: a stand-in
    without height (a whole data-centre network, a bundle of cables) or a circuit switch is no
    leaf for servers."""
    nic = catalog[nic_id]
    speed = nic.number("port_gbps")
    media = network_media(catalog, nic)
    switches = sorted((s for s in catalog.of_kind("switch") if s.number("height_u") > 0 and not s.get("circuit")
                       and s.number("port_gbps") >= speed),
                      key=lambda s: (s.number("port_gbps"), -s.number("ports"), s.id))
    for medium in media:
        chosen = next((s for s in switches if medium in s.media), None)
        if chosen is not None:
            return chosen.id
    raise TopologyError(f"no switch in the catalogue has ports of {speed:g} Gb/s or faster for "
                        f"{' or '.join(media) or 'any medium'} (the network of '{nic_id}'); set parameter 'switch'")


def follow_parts(p: dict, catalog: Catalog, platform: str = DEFAULT_PLATFORM) -> None:
    """Fill the parts a user left out from the ones named: the platform from 'gpu' (`platform`,
    the template's own, while 'gpu' is unnamed or the one it carries), the switch from the NIC
    (named, or the platform's). Written back into `p`, so the file says what was chosen."""
    if p.get("platform") is None:
        gpu = p.get("gpu")
        kept = gpu is None or gpu == catalog[platform].get("default_accelerator")
        p["platform"] = platform if kept else platform_for(catalog, gpu)
    if "switch" in p and p["switch"] is None:
        nic = p.get("nic") or catalog[p["platform"]].get("default_nic")
        if nic is None:
            raise TopologyError(f"platform '{p['platform']}' has no default NIC; set parameter 'nic' (the switch "
                                "follows from it)")
        p["switch"] = switch_for(catalog, nic)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)

