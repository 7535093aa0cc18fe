"""What a campaign will not verify, said before it starts, and the warnings its results
carry: results nothing was compared with, outputs compared with another configuration's."""

from __future__ import annotations

from collections.abc import Sequence

from perfport._core import ArrayArg, Check, KernelSpec, Measurement
from perfport.measure import RunSettings


def verification_plan(spec: KernelSpec, settings: RunSettings) -> tuple[str, ...]:
    """What a campaign of ``spec`` will not verify, said before it starts."""
    outputs = [a for a in spec.args if isinstance(a, ArrayArg) and a.output]
    if not settings.verify:
        return ("outputs will not be verified (verification is off): wrong results are timed",)
    if not outputs:
        return (f"kernel {spec.name} has no output arrays: its outputs cannot be verified",)
    if all(a.ignore for a in outputs) and spec.verify is None:
        return (f"every output of kernel {spec.name} is ignored: nothing will be verified",)
    if spec.reference is None and spec.reference_kernel is None and spec.default is None:
        return (
            f"kernel {spec.name} has no reference, reference kernel or default configuration: "
            "outputs are compared with those of the first configuration that runs",
        )
    return ()


def _verification_warnings(
    measurements: Sequence[Measurement], verify: bool, verification: str, note: str
) -> tuple[str, ...]:
    """What the CLI says loudly: results nothing was compared with, and outputs compared with
    a configuration other than the default one."""
    out = []
    unverified = sum(m.ok and m.check is Check.UNVERIFIED for m in measurements)
    if unverified:
        why = "verification is off (--no-verify)" if not verify else verification
        ok = sum(m.ok for m in measurements)
        out.append(f"{unverified} of {ok} correct-looking results are not verified: {why}")
    against = {m.verified_against for m in measurements if m.check is Check.VERIFIED}
    if note and any(a and a.startswith("reference configuration") for a in against):
        out.append(f"outputs verified against another configuration's, since {note}")
    return tuple(out)
