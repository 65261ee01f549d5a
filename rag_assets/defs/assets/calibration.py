"""Judge calibration, wired: the judge review an evaluation sends out, the judge_calibration asset that
reads the experts' verdicts back, its check, and the job the inbox sensor runs for a judge-review file."""

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

import dagster as dg

from rag_assets.calibration.gate import DEFAULT_MIN_KAPPA, calibration_gate
from rag_assets.app.judge_review import ReviewSent
from rag_assets.calibration.models import JudgeConfig, JudgeReview, StoredCalibration
from rag_assets.calibration.review_file import is_judge_review, read_judge_review
from rag_assets.calibration.stats import MetricCalibration, calibrate_all
from rag_assets.curation.inbox import import_review_file, inbox_files
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.assets.curation import review_files_check
from rag_assets.defs.jobs import AssetJob
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import CurationResource, StoreResource
from rag_assets.errors import ConfigError
from rag_assets.settings import current_settings
from rag_assets.store.calibration_repository import ReviewApplied, SqlCalibrationRepository
from rag_assets.text.markdown import markdown_list, markdown_table

CALIBRATION_CHECK = "judge_agreement"
JUDGE_REVIEW_FILES_CHECK = "judge_review_files_valid"

#: When automation materializes judge_calibration: once an evaluation (any corpus version) was made, when none
#: is in progress. Not ``eager()``: that waits for every upstream partition, and an old corpus version's
#: evaluation may never be made.
AFTER_AN_EVALUATION = (dg.AutomationCondition.any_deps_updated().since_last_handled()
                       & ~dg.AutomationCondition.any_deps_in_progress()
                       & ~dg.AutomationCondition.in_progress()).with_label("after an evaluation")


def calibrations(store: StoreResource) -> SqlCalibrationRepository:
    return SqlCalibrationRepository(store.engine())


def judge_review_metadata(config: JudgeConfig, review: ReviewSent,
                          means: Mapping[str, float | None]) -> dict[str, dg.MetadataValue]:
    """An evaluation's metadata about its judge review: the judge, each reviewed metric's mean beside its
    judge's calibration, and the files sent (none when the sample was empty)."""
    shown = [f"{m} {means[m]:.3f} · {text}" for m, text in review.calibration.items() if means.get(m) is not None]
    metadata = {"judge_config": dg.MetadataValue.text(f"{config.key}: {config.label()}"),
                "judge_calibration": dg.MetadataValue.md(markdown_list(shown))}
    if review.files:
        metadata.update({"judge_review_items": dg.MetadataValue.int(len(review.sample)),
                         "judge_review_workbook": dg.MetadataValue.path(str(review.files[0])),
                         "judge_review_csv": dg.MetadataValue.path(str(review.files[1]))})
    return metadata


class JudgeCalibrationConfig(dg.Config):
    """Which judge-review files to import (names in the inbox, or absolute paths); empty means every one there."""

    files: list[str] = []


@functools.cache
def build_judge_calibration(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "curation"),
        key_prefix=lifecycle.key_prefix,
        group_name=lifecycle.named("calibration"),
        # after every evaluation (of any corpus version): its judge is the one the judge_agreement check asks about
        deps=[lifecycle.key("evaluation")],
        automation_condition=AFTER_AN_EVALUATION,
        owners=OWNERS,
        kinds={"python", "excel", "sql"},
        check_specs=[dg.AssetCheckSpec(
            JUDGE_REVIEW_FILES_CHECK, asset=lifecycle.key("judge_calibration"), blocking=True,
            description="Every imported judge-review file passed validation (every column, verdict values, known item "
                        "ids of the evaluation's sample, its evaluation id and judge configuration, a reviewer on each "
                        "reviewed row, at least one verdict, no formula cells). A rejected file is applied not at all "
                        "and fails the run, as a rejected question review does.")],
        description=(
            "The judge's agreement with your experts. Imports the judge-review files (judge-review-<evaluation>.xlsx "
            "or .csv) from the curation inbox, each validated whole and stored in one transaction, then moved to "
            "processed/ (a bad one to rejected/ with a report naming row and column). Per metric and judge "
            "configuration (provider, model, judge templates, embedder): accuracy, Cohen's kappa with a bootstrap 95% "
            "interval, the confusion matrix and the items judge and experts disagree on. Materialized after every "
            "evaluation too (the lifecycle, reevaluate and curation_import jobs, and automation), so that the "
            "judge_agreement check always speaks of the judge of the newest evaluation."
        ),
    )
    def judge_calibration(context: dg.AssetExecutionContext, config: JudgeCalibrationConfig) -> dg.MaterializeResult:
        services = lifecycle.services(context)
        return _calibrate(context, config, services.store, services.curation)

    return judge_calibration


def _calibrate(context: dg.AssetExecutionContext, config: JudgeCalibrationConfig, store: StoreResource,
               curation: CurationResource) -> dg.MaterializeResult:
    """Import the judge reviews, recompute the calibration of every judge configuration they review."""
    folders = curation.folders()
    repo = calibrations(store)
    files = ([Path(n) if Path(n).is_absolute() else folders.inbox / n for n in config.files] if config.files
             else [p for p in inbox_files(folders.inbox) if is_judge_review(p, curation.limits())])
    missing = [path for path in files if not path.exists()]
    if missing:
        context.log.warning(f"not in the inbox any more (already imported?): {', '.join(map(str, missing))}")
    measured: dict[str, tuple[JudgeConfig, tuple[MetricCalibration, ...]]] = {}

    def apply(review: JudgeReview) -> ReviewApplied:
        """The file's verdicts and its judge's calibration over every verdict then, stored in one transaction."""
        applied = repo.apply_review(review, calibrate_all)
        if applied.judge is not None:
            measured[applied.judge.key] = (applied.judge, applied.calibration)
        return applied

    results = [import_review_file(path, folders, {}, lambda p, _, limits: read_judge_review(p, repo.sample, limits),
                                  apply, curation.limits()) for path in files if path.exists()]
    summaries = [(judge, m) for _, (judge, found) in sorted(measured.items()) for m in found]
    current = repo.current_config()
    stored = repo.calibration(current) if current else {}
    rejected = [r for r in results if r.status == "rejected"]
    if rejected:
        context.log.warning(f"judge-review file(s) rejected: {', '.join(r.source for r in rejected)}")
    return dg.MaterializeResult(metadata={
        "judge_config": dg.MetadataValue.text(f"{current.key}: {current.label()}" if current else "none yet"),
        **_calibration_tables(summaries),
        **{f"kappa_{metric}": dg.MetadataValue.float(round(found.kappa, 4))
           for metric, found in stored.items() if found.kappa is not None},
        **{f"n_{metric}": dg.MetadataValue.int(found.n) for metric, found in stored.items()},
        "files": dg.MetadataValue.int(len(results)),
        "files_applied": dg.MetadataValue.int(sum(1 for r in results if r.status == "applied")),
        "files_rejected": dg.MetadataValue.int(len(rejected)),
        "imports": dg.MetadataValue.md(markdown_table(
            ["file", "status", "moved to", "report"], [(r.source, r.status, r.moved_to, r.report or "") for r in results])),
    }, check_results=[review_files_check(JUDGE_REVIEW_FILES_CHECK, "judge-review", results)])


def _calibration_tables(summaries: Sequence[tuple[JudgeConfig, MetricCalibration]]) -> dict[str, dg.MetadataValue]:
    """The calibrations computed in this run, and the items judge and experts disagree on."""
    return {
        "calibration": dg.MetadataValue.md(markdown_table(
            ["judge config", "metric", "n", "accuracy", "Cohen's kappa [95% CI]", "expert pass: judge pass / fail",
             "expert fail: judge pass / fail"],
            [(judge.key, m.metric, m.n, f"{m.accuracy:.3f}", str(m.kappa), "{pass} / {fail}".format(**m.confusion["pass"]),
              "{pass} / {fail}".format(**m.confusion["fail"])) for judge, m in summaries])),
        "disagreements": dg.MetadataValue.md(markdown_table(
            ["judge config", "metric", "item", "judge", "expert", "reviewer", "notes"],
            [(judge.key, m.metric, d.item_id, d.judge, d.expert, d.reviewer, d.notes or "")
             for judge, m in summaries for d in m.disagreements])),
    }


class JudgeAgreementConfig(dg.Config):
    """The least kappa per metric (default RAG_ASSETS_JUDGE_MIN_KAPPA, else 0.6) and the severity of a failure
    (WARN or ERROR; default RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY, else WARN)."""

    min_kappa: float | None = None
    severity: str | None = None


@functools.cache
def build_judge_agreement(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        required_resource_keys=lifecycle.resource_keys("store"),
        asset=lifecycle.key("judge_calibration"),
        name=CALIBRATION_CHECK,
        description=(
            "The judge in use (the newest evaluation's configuration) is the one calibrated last, and on every "
            "metric its Cohen's kappa with your experts is at least min_kappa (default 0.6). WARN by default; "
            "severity ERROR or RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY=ERROR makes it an error."
        ),
    )
    def judge_agreement(context: dg.AssetCheckExecutionContext, config: JudgeAgreementConfig) -> dg.AssetCheckResult:
        return _agreement(config, lifecycle.services(context).store)

    return judge_agreement


def _agreement(config: JudgeAgreementConfig, store: StoreResource) -> dg.AssetCheckResult:
    try:
        settings = current_settings()
        severity = (config.severity or settings.judge_calibration_severity).upper()
        if severity not in ("WARN", "ERROR"):
            raise ConfigError(f"severity {config.severity!r} is neither WARN nor ERROR")
        min_kappa = next(kappa for kappa in (config.min_kappa, settings.judge_min_kappa, DEFAULT_MIN_KAPPA)
                         if kappa is not None)
        repo = calibrations(store)
        current = repo.current_config()
        stored: dict[str, StoredCalibration] = repo.calibration(current) if current else {}
        gate = calibration_gate(current, repo.last_calibrated_config(), stored, min_kappa, required=severity == "ERROR")
    except ConfigError as exc:
        raise dg.Failure(description=f"invalid judge_agreement config: {exc}") from exc
    return dg.AssetCheckResult(
        passed=gate.passed, severity=dg.AssetCheckSeverity[severity], description=gate.description,
        metadata={"min_kappa": dg.MetadataValue.float(min_kappa),
                  "judge_config": dg.MetadataValue.text(current.label() if current else "none yet"),
                  "metrics": dg.MetadataValue.md(markdown_table(["metric", "n", "kappa [95% CI]", "status"], gate.rows))})


@functools.cache
def build_judge_calibration_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("judge_calibration_import"),
        selection=lifecycle.assets("judge_calibration"),
        description="Import experts' judge reviews and measure the judge's agreement with them: what the inbox "
                    "sensor runs for a judge-review file.",
    )


def judge_review_request(lifecycle: Lifecycle, path: Path, run_key: str, tags: Mapping[str, str]) -> dg.RunRequest:
    """The run the inbox sensor requests for a judge-review file (no partition: calibration spans evaluations)."""
    return dg.RunRequest(run_key=run_key, job_name=build_judge_calibration_job(lifecycle).name, tags=dict(tags),
                         run_config={"ops": {lifecycle.key("judge_calibration").to_python_identifier(): {
                             "config": {"files": [path.name]}}}})


judge_calibration = build_judge_calibration(BUNDLED)
judge_agreement = build_judge_agreement(BUNDLED)
judge_calibration_job = build_judge_calibration_job(BUNDLED)
