"""The calibration gate: is the judge in use now calibrated, and does it agree with the experts enough?"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from rag_assets.calibration.models import JudgeConfig, StoredCalibration
from rag_assets.errors import ConfigError

DEFAULT_MIN_KAPPA = 0.6


@dataclass(frozen=True)
class GateResult:
    passed: bool
    description: str
    rows: list[tuple[str, str, str, str]]  # metric, n, kappa [95% CI], status


def _changes(before: JudgeConfig, now: JudgeConfig) -> str:
    old, new = asdict(before), asdict(now)
    return ", ".join(f"{field} {old[field]} -> {new[field]}" for field in old if old[field] != new[field])


NO_VERDICTS_YET = ("not applicable: no expert verdicts imported yet, so nothing to measure the judge against; return "
                   "a judge-review file from the curation outbox, filled in, to the inbox")
NEVER_CALIBRATED = ("the judge was never calibrated (severity ERROR requires a calibrated judge): no expert verdicts "
                    "imported yet; return a judge-review file from the curation outbox, filled in, to the inbox")
NOT_MEASURABLE = ("judge agreement not measurable: on every metric the judge and the experts gave each item one and "
                  "the same verdict; review a sample that holds the judge's fails")


@dataclass(frozen=True)
class KappaStanding:
    """Kappas against a least kappa: the metrics below it (as "metric κ=0.583"), those whose kappa is undefined,
    and the minimum itself."""

    low: tuple[str, ...]
    unmeasurable: tuple[str, ...]
    measured: bool
    min_kappa: float

    @property
    def failed(self) -> bool:
        """Some metric is below the minimum, or none has a kappa (nothing was measured). An undefined kappa beside
        defined ones fails nothing: the judge and the experts gave every item one and the same verdict there, and
        a gate does not fail on what does not apply."""
        return bool(self.low) or not self.measured

    def reason(self) -> str:
        if self.low:
            return f"judge agreement with your experts below κ={self.min_kappa:g}: {', '.join(self.low)}"
        return "" if self.measured else NOT_MEASURABLE


def kappa_standing(kappas: Mapping[str, float | None], min_kappa: float) -> KappaStanding:
    """How these kappas (``None`` where undefined) stand against ``min_kappa``: the one rule by which both the
    ``judge_agreement`` check and ``rag-assets calibrate --min-kappa`` decide."""
    ordered = sorted(kappas.items())
    return KappaStanding(tuple(f"{metric} κ={kappa:.3f}" for metric, kappa in ordered if kappa is not None and kappa < min_kappa),
                         tuple(metric for metric, kappa in ordered if kappa is None),
                         any(kappa is not None for _, kappa in ordered), min_kappa)


def calibration_gate(current: JudgeConfig | None, last: JudgeConfig | None, calibration: Mapping[str, StoredCalibration],
                     min_kappa: float = DEFAULT_MIN_KAPPA, *, required: bool = False) -> GateResult:
    """Fails when the judge in use (``current``, the newest evaluation's) is not the one calibrated last, or when a
    metric's kappa is below ``min_kappa``. ``calibration`` is the current judge's StoredCalibration per metric.
    Before any expert verdict was imported (``last`` None) it passes as not applicable, saying so: the check runs
    after every evaluation, and a home whose experts have not answered yet has nothing to disagree with; unless a
    calibrated judge is ``required`` (the check's severity ERROR), where a judge never calibrated fails. With
    verdicts but no evaluation judged yet (``current`` None) there is no judge in use to measure: not applicable.

    Kappa is undefined only when the judge and the experts gave every item one and the same verdict: they
    agree, but the sample cannot show whether the judge would tell a good answer from a bad one. Such a
    metric is "not measurable" (shown, never a failure: a gate does not fail on what does not apply); the
    gate fails when no metric is measurable, since then nothing was measured at all."""
    if not 0.0 <= min_kappa <= 1.0:
        raise ConfigError(f"min_kappa={min_kappa} is not between 0 and 1; for example 0.6")
    if last is None:
        return (GateResult(False, NEVER_CALIBRATED, []) if required else GateResult(True, NO_VERDICTS_YET, []))
    if current is None:
        return GateResult(True, "not applicable: no evaluation has been judged yet, so no judge is in use", [])
    if current.key != last.key:
        return GateResult(False, f"the judge configuration changed since the last calibration ({_changes(last, current)}); "
                                 "its agreement with your experts is unknown until a judge review comes back", [])
    rows = []
    for metric, found in sorted(calibration.items()):
        kappa = found.kappa
        interval = f" [{found.kappa_low:.3f}, {found.kappa_high:.3f}]" if found.kappa_low is not None else ""
        if kappa is None:
            rows.append((metric, str(found.n), "undefined", "not measurable: one verdict on both sides"))
        else:
            rows.append((metric, str(found.n), f"{kappa:.3f}{interval}", "ok" if kappa >= min_kappa else "below"))
    standing = kappa_standing({metric: found.kappa for metric, found in calibration.items()}, min_kappa)
    if standing.failed:
        return GateResult(False, standing.reason(), rows)
    unmeasurable = standing.unmeasurable
    skipped = f" ({', '.join(unmeasurable)} not measurable: one verdict on both sides)" if unmeasurable else ""
    return GateResult(True, f"every calibrated metric at or above κ={min_kappa:g} for {current.label()}{skipped}", rows)
