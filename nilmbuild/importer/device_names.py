"""The upstream's device names (the config's `app`) -> nilmbuild's device names, at import and nowhere else.

CondiNILM and the original NILMFormer name an appliance as its data set does: UK-DALE runs "kettle",
"washing_machine"; REFIT runs "Kettle", "WashingMachine", "Dishwasher" (their configs/datasets.yaml). nilmbuild's
data side, thresholds, palette and evaluation know its own names only (data.household.DEVICE_NAMES). So the
importer maps each `app` name onto one of them with the same table every data loader uses for channel labels
(data.household.device_for_label: case, spaces and underscores ignored), and the imported checkpoint carries
nilmbuild's names everywhere after that: one source of truth. The upstream's own names stay in the checkpoint's
provenance (upstream.devices, upstream.device_names) and in its config, and what the upstream derives from a name
(CondiNILM's sparse CNN for a kettle, its gate-logit floor per device type) is derived from the upstream's name.
A name the table does not know is refused with one line: no page or command could explain that device.
"""

from __future__ import annotations

from nilmbuild.data.household import DEVICE_NAMES, device_for_label
from nilmbuild.errors import UserError


def canonical_devices(upstream: list[str], where: str) -> list[str]:
    """nilmbuild's name for each upstream device name, in the same order; a one-line UserError for a name it
    does not know or two names that would become one device. where: the config's file name, for messages."""
    mapped = [device_for_label(n) for n in upstream]
    unknown = [n for n, m in zip(upstream, mapped, strict=True) if m is None]
    if unknown:
        raise UserError(
            f"--config {where}: `app` names {', '.join(map(repr, unknown))}, which nilmbuild cannot explain: it "
            f"knows {', '.join(DEVICE_NAMES)} (any case or spelling such as WashingMachine); import a model of those"
        )
    twice = sorted({m for m in mapped if mapped.count(m) > 1})
    if twice:
        same = [n for n, m in zip(upstream, mapped, strict=True) if m in twice]
        raise UserError(
            f"--config {where}: `app` names {', '.join(map(repr, same))}, which are all nilmbuild's "
            f"{', '.join(twice)}: one model output per device"
        )
    return [str(m) for m in mapped]


def renamed(upstream: list[str], canonical: list[str]) -> dict[str, str]:
    """{upstream name: nilmbuild name} for the names the import changed (what the provenance records)."""
    return {u: c for u, c in zip(upstream, canonical, strict=True) if u != c}
