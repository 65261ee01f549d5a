"""``rag-assets``: run the lifecycle for the current corpus version and print a summary.

Runs go through Dagster (``execute_in_process`` on a persistent instance), so they show up in
``dagster dev`` when that is started with the same DAGSTER_HOME (``rag-assets ui`` does that).
"""

from __future__ import annotations

import argparse
import errno
import importlib.metadata
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from typing import TextIO
from pathlib import Path

import dagster as dg

from rag_assets.app.review_simulation import sample_review_path
from rag_assets.cli.door import argument_problems
from rag_assets.cli.failures import failed_steps, run_secrets
from rag_assets.cli.instance import Driven, driven
from rag_assets.cli.metadata_text import detail_lines, scalar_text
from rag_assets.cli.summary import RunState, Shown, failed_gates, run_state, with_pending_review, write_summary_json
from rag_assets.cli.system import importable_from_here, system_run_config
from rag_assets.cli.trial import accept_all_ops, unreviewed_lines
from rag_assets.console import event_log
from rag_assets.curation.models import Decision
from rag_assets.defs.orphaned_runs import fail_orphaned_runs, process_tags
from rag_assets.errors import ConfigError, RagAssetsError, ReviewFileRejected
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.settings import CORPUS_ROOT_ENV, Settings, SettingsError, current_settings, environment

DESCRIPTION = ("Run the lifecycle of a RAG golden set (corpus snapshot, candidate questions, expert review, "
               "golden set, RAG answers, scores) as Dagster assets, and print what happened.")
EPILOG = ("Settings come from environment variables (RAG_ASSETS_HOME, RAG_ASSETS_CORPUS_ROOT, ANTHROPIC_API_KEY, ...; "
          "docs/environment.md lists them all). Each is checked before anything is written.")

CORPUS_HELP = f"corpus root (default: the instance's; ${CORPUS_ROOT_ENV} or ./data/corpus for the unnamed one)"
INSTANCE_HELP = "the RagEvaluation instance of the code location to drive (default: the unnamed one)"


#: The instance the CLI makes under the project home. Run monitoring fails runs that never start (a
#: ``dagster dev`` on the same home runs its daemon); runs of a killed CLI are failed by orphaned_runs.
CLI_INSTANCE_YAML = ("telemetry:\n  enabled: false\nrun_monitoring:\n  enabled: true\n  start_timeout_seconds: 180\n"
                     "  cancel_timeout_seconds: 180\n  poll_interval_seconds: 60\n")


def _dagster_home(settings: Settings) -> Path:
    """DAGSTER_HOME when set, else a folder in the project's home (made on first use)."""
    if settings.dagster_home:
        return settings.dagster_home
    home = settings.home / "dagster"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists() or config.read_text() == "telemetry:\n  enabled: false\n":  # the earlier default
        config.write_text(CLI_INSTANCE_YAML)
    return home


def _instance(settings: Settings) -> dg.DagsterInstance:
    """The Dagster instance of the CLI's runs, read from its home's dagster.yaml (the environment is left as it
    was: nothing but this process's own runs needs to find it)."""
    instance = dg.DagsterInstance.from_config(str(_dagster_home(settings)))
    for run_id in fail_orphaned_runs(instance):
        print(f"run {run_id} was left STARTED by a rag-assets process that is gone; marked FAILED")
    return instance


def ui_command(settings: Settings, port: int | None = None, host: str | None = None,
               corpus: str | None = None) -> tuple[list[str], dict[str, str]]:
    """``dagster dev`` on the code location the CLI drives, with the DAGSTER_HOME the CLI's runs are kept in; its
    webserver on ``port`` and ``host`` when given (else dagster dev's own defaults, 127.0.0.1:3000). ``corpus``
    (``--corpus``) is the corpus root of its processes: the child's environment, not this one's."""
    env = {**environment(), "DAGSTER_HOME": str(_dagster_home(settings)),
           **({CORPUS_ROOT_ENV: str(Path(corpus).expanduser().absolute())} if corpus else {})}
    where = [*(["--port", str(port)] if port else []), *(["--host", host] if host else [])]
    return [str(Path(sys.executable).with_name("dagster")), "dev", "-m", settings.code_location, *where], env


# What the summary table shows of each asset: metadata labels, in order.
KEY_FACTS: dict[str, tuple[str, ...]] = {
    "corpus_snapshot": ("documents", "chunks", "documents_added", "documents_changed", "documents_removed",
                        "documents_renamed", "skipped_files"),
    "question_candidates": ("candidates", "new_candidates", "requeued_stale_items", "llm"),
    "curation_queue": ("pending",),
    "curated_decisions": ("files_applied", "files_rejected", "decisions", "accepted_unreviewed"),
    "golden_set": ("golden_version", "items", "added", "removed", "changed", "stale_new", "stale_total", "moved",
                   "unreviewed"),
    "rag_answers": ("system", "answered", "errors", "declined", "contexts_unmapped_share", "latency_p95_ms"),
    "evaluation": (*REGISTRY.headline(), "judge_calls_per_item", "thresholds"),  # the headline metrics at k = 5
    "judge_probes": ("items_probed", "share_of_evaluation_calls"),
    "judge_calibration": ("files_applied", "files_rejected"),
    "ab_comparison": ("recommendation", "reason", "current", "candidate", "delta_faithfulness", "delta_recall@5",
                      "errors", "judge_failures"),
    "production_sample": ("records", "sample_size", "bad_lines", "faithfulness", "context_precision",
                          "citation_accuracy", "judge_failures", "drift_alerts", "coverage_gaps", "queued_candidates"),
}
#: What a run can do for a corpus nobody has reviewed yet: snapshot it, generate candidates, queue them for review.
REVIEW_FIRST = ("corpus_snapshot", "question_candidates", "curation_queue")
#: How many of the newest logged days the CLI scores (each day's drift check compares with the days before).
PRODUCTION_DAYS_SHOWN = 7


def _earlier_mark(shown: Shown) -> str:
    return f"  (earlier run {shown.run_id[:8]})" if shown.earlier else ""


def summary_table(state: RunState) -> str:
    """One line per asset partition with the numbers a user looks for first, then the checks; results an
    earlier run made (the asset was up to date) are marked with that run."""
    width = max([22, *(len(s.materialization.asset_key.to_user_string()) + 3 for s in state.materializations)])
    lines = [f"{'asset':<{width}}{'partition':<18}key facts", "-" * 100]
    for shown in state.materializations:
        materialization = shown.materialization
        name = materialization.asset_key.to_user_string()
        facts = []
        for label in KEY_FACTS.get(materialization.asset_key.path[-1], ()):
            entry = materialization.metadata.get(label)
            value = scalar_text(entry) if entry is not None else None
            if value is not None:
                facts.append(f"{label}={float(value):.3f}" if isinstance(entry.value, float) else f"{label}={value}")
        lines.append(f"{name:<{width}}{materialization.partition or '':<18}{', '.join(facts)}{_earlier_mark(shown)}")
    failed = [shown for shown in state.checks if not shown.check.passed]
    lines.append(f"\nchecks: {len(state.checks) - len(failed)} passed, {len(failed)} failed")
    lines.extend(f"  FAILED {s.check.asset_key.to_user_string()}.{s.check.check_name} [{s.check.partition}]: "
                 f"{s.check.description}{_earlier_mark(s)}" for s in failed)
    return "\n".join(lines)


def summary(state: RunState) -> str:
    """A plain-text dump of every shown asset's metadata (tables, lists and reports too, their first lines: see
    ``rag_assets.cli.metadata_text``), and the check results."""
    lines = []
    for shown in state.materializations:
        materialization = shown.materialization
        lines.append(f"\n{materialization.asset_key.to_user_string()} [{materialization.partition}]{_earlier_mark(shown)}")
        for label, entry in materialization.metadata.items():
            value, details = scalar_text(entry), detail_lines(entry)
            if value is not None:
                lines.append(f"  {label:<24} {value}")
            elif details is not None:
                lines.append(f"  {label:<24} (none)" if not details else f"  {label}")
                lines.extend(f"    {line}" for line in details)
    if state.checks:
        lines.append("\nchecks")
        lines.extend(f"  {s.check.asset_key.to_user_string() + '.' + s.check.check_name:<48} "
                     f"{'passed' if s.check.passed else 'FAILED'}" for s in state.checks)
    return "\n".join(lines)


def _plan_version(target: Driven) -> str:
    from rag_assets.corpus.snapshot import plan_snapshot

    corpus = target.resource("corpus")
    return plan_snapshot(corpus.resolved_root(), corpus.chunker(), target.resource("store").corpus()).version_id


def _held_version(target: Driven) -> str | None:
    """The corpus version the corpus folder held at its last snapshot (None: none, or the folder is gone)."""
    from rag_assets.corpus.snapshot import held_version

    return held_version(target.resource("corpus").resolved_root(), target.resource("store").corpus())


def _curation_root(target: Driven) -> Path:
    return target.resource("curation").folders().root


def _stage_review(source: Path, version: str, target: Driven, simulated: str | None = None) -> None:
    """Put a review file in the inbox before the run: the user's ``--review`` file, checked first as its import
    will, or the simulated expert's review (``simulated`` says which, in the line printed); not a file whose bytes
    were applied already (importing it again could change nothing)."""
    if _applied_already(source, target):
        return
    if simulated is None:
        _check_review(source, version, target)
    inbox = _curation_root(target) / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, inbox / source.name)
    kind = "reviewed file" if simulated is None else f"simulated expert review ({simulated})"
    print(f"{kind}: {source} -> {inbox / source.name}")


def _applied_already(source: Path, target: Driven) -> bool:
    """Whether a review file with ``source``'s bytes was applied already, which is then printed: importing it again
    could change nothing."""
    from rag_assets.curation.inbox import file_sha256

    if not target.resource("store").curation().is_applied(file_sha256(source)):
        return False
    print(f"review file {source}: applied already")
    return True


def _simulated_expert_review(instance: dg.DagsterInstance, target: Driven, version: str,
                             system: dict | None) -> dg.ExecuteInProcessResult | None:
    """Stage the simulated expert's review of ``version``, where the curation folder's sample folder has one (the
    bundled sample corpus in a checkout, or a corpus ``simulate-review`` decided; a team's own corpus has none,
    and gets none): that file when it reviews the candidates the store has (``expert_review``), else the same
    expert's decisions on the queue of those candidates (none when nothing waits in it). The bundled review is
    the offline generator's candidates: when the store has none of this version yet and the run's generator is
    another one (Claude, with a key), the candidates are generated and queued first, in a run of their own
    (REVIEW_FIRST) that is returned as one of this invocation's; without it the bundled review was imported
    against Claude's candidates and failed the run."""
    from rag_assets.app.review_simulation import expert_review

    root = _curation_root(target)
    bundled = sample_review_path(root, version)
    if not bundled.exists() or _applied_already(bundled, target):
        return None  # an applied one is not read again: its check imports Great Expectations, 4 s of every re-run
    candidates = target.resource("store").candidates()
    generated = None
    if not candidates.for_version(version) and not target.resource("llm").offline():
        generated = _execute(instance, target, version, [target.key(name) for name in REVIEW_FIRST], system)
        if not generated.success:
            return generated
    source = (expert_review(root, version, candidates.corpus_versions_by_id(), target.resource("curation").limits())
              if candidates.for_version(version) else bundled)
    if source is not None:
        _stage_review(source, version, target, "bundled" if source == bundled else
                      "of this run's candidates: the bundled one reviews other candidates")
    return generated


def _execute(instance: dg.DagsterInstance, target: Driven, version: str, selection: Sequence[dg.AssetKey],
             system: dict | None, ops: dict | None = None) -> dg.ExecuteInProcessResult:
    """Run the lifecycle job on ``version``'s partition for the ``selection``, as the CLI triggers it."""
    return target.job("lifecycle").execute_in_process(
        partition_key=version, instance=instance, raise_on_error=False, asset_selection=selection,
        tags={"rag_assets/trigger": "cli", **process_tags()},
        run_config={**target.run_config((system or {}).get("resources", {})), **({"ops": ops} if ops else {})})


def _check_review(source: Path, version: str, target: Driven) -> None:
    """A ``--review`` file read and checked as its import will, before it reaches the inbox: a question review
    against its candidates (``read_review_file``, then ``refuse_undoable``), a judge review against the evaluation
    samples it reviews (``read_judge_review``). A bad row stops the command with one line naming file, sheet, row
    and field (exit 2), and nothing is staged or applied (a bad judge review used to run the whole lifecycle first,
    then exit 1). The import checks it again (the store may change in between), as it does any file dropped in the
    inbox by hand; a question review given before this home has candidates is checked by its import only (this run
    generates them). A review of another corpus version than ``version`` is refused too: a run imports its own
    version's reviews only, and such a file sat in the inbox, applied to nothing, while the run exited 0 (tester)."""
    from rag_assets.calibration.review_file import is_judge_review, read_judge_review
    from rag_assets.curation.inbox import declared_corpus_version
    from rag_assets.curation.review_file import read_review_file, refuse_undoable
    from rag_assets.defs.assets.calibration import calibrations

    store, limits = target.resource("store"), target.resource("curation").limits()
    judge_review = is_judge_review(source, limits)
    declared = None if judge_review else declared_corpus_version(source)
    if declared not in (None, version):
        raise RagAssetsError(f"{source} reviews corpus version {declared}, but the corpus is now {version} and a run "
                             f"imports the reviews of its own version only: review {version}'s candidates (the run "
                             "writes their review file to the curation outbox); nothing staged or applied")

    candidates = store.candidates()
    try:
        if judge_review:
            read_judge_review(source, calibrations(store).sample, limits)
        elif known := candidates.corpus_versions_by_id():
            review = read_review_file(source, known, limits)
            refuse_undoable(review, candidates.by_ids([row.candidate_id for row in review.rows]))
    except ReviewFileRejected as rejected:
        raise RagAssetsError(f"{rejected.first_line()}; nothing staged or applied") from None


def _changed_assets(instance: dg.DagsterInstance, target: Driven, version: str, review_waiting: bool,
                    forced: Sequence[dg.AssetKey]) -> list[dg.AssetKey]:
    """The lifecycle's assets a run of ``version`` must materialize: the stale or missing ones, the ``forced`` ones,
    curated_decisions and the queue its decisions shrink while a review file of this version waits in the inbox
    or the store applied one that Dagster never recorded (a run killed in between), golden_set when the store
    holds accepted items its last build lacks (``import-golden``), and everything when the store lacks the
    snapshot (the instance ran against another store); with all downstream of them."""
    from rag_assets.defs.assets.curation import decisions_unrecorded
    from rag_assets.defs.assets.golden import golden_set_behind
    from rag_assets.defs.freshness import stale_selection
    from rag_assets.defs.jobs import build_lifecycle_job

    store, decisions, golden = target.resource("store"), target.key("curated_decisions"), target.key("golden_set")
    waiting = review_waiting or decisions_unrecorded(instance, decisions, store.curation(), version)
    stored = store.corpus().get_snapshot(version) is not None
    imported = golden_set_behind(instance, golden, store, version)
    return stale_selection(instance, target.defs, build_lifecycle_job(target.lifecycle).selection, version, [
        *forced, *([decisions, target.key("curation_queue")] if waiting else []),
        *([golden] if imported else []), *([] if stored else [target.key("corpus_snapshot")])])


def _answers_again(instance: dg.DagsterInstance, target: Driven, version: str, system: dict | None) -> bool:
    """Whether this run must answer the golden set of ``version`` again, for the system it configures: the flags
    name one (``--system``, ``--system-url``: answered anew each time), or the newest answers were made by a run
    that configured another one (a ``--system`` run before this plain one). Dagster cannot see a resource's run
    config in its data versions: those answers, and the scores and A/B built on them, would otherwise stand for
    this run's system."""
    from rag_assets.defs.reuse import last_materialization

    if system:
        return True
    record = last_materialization(instance, target.key("rag_answers"), version)
    run = instance.get_run_by_id(record.run_id) if record is not None else None
    return run is not None and bool(run.run_config.get("resources", {}).get(target.lifecycle.named("rag")))


def _review_waiting(version: str, target: Driven) -> bool:
    """Whether a review file of corpus version ``version`` waits in the inbox."""
    from rag_assets.curation.inbox import declared_corpus_version, inbox_files

    inbox = _curation_root(target) / "inbox"
    return inbox.is_dir() and any(declared_corpus_version(path) == version for path in inbox_files(inbox))


def _planned_lineage(version: str, target: Driven) -> list[str]:
    """The lineage of corpus version ``version`` once this run has snapshotted it, newest first: the stored one's,
    or for a version not snapshotted yet (the corpus changed since the last run) itself followed by the lineage
    of the parent its snapshot will get. Asked before the snapshot exists, the store's lineage would be
    ``[version]`` alone and miss every decision taken on the earlier versions."""
    from rag_assets.corpus.snapshot import planned_parent

    corpus = target.resource("store").corpus()
    if corpus.get_snapshot(version) is not None:
        return corpus.lineage(version)
    resource = target.resource("corpus")
    parent = planned_parent(resource.resolved_root(), resource.chunker(), corpus)
    return [version, *(corpus.lineage(parent) if parent else [])]


def _review_first(version: str, review_waiting: bool, target: Driven) -> bool:
    """Whether nobody has reviewed anything for this corpus (no accepted item in its lineage, none imported) and
    no review waits: then a run can only snapshot, generate and queue the candidates for review, and what it
    builds on them (golden set, answers, scores) waits for the review rather than failing for want of it.
    The lineage is the one the snapshot will have, so a changed corpus keeps the decisions of its ancestors and
    its run builds and gates the golden set instead of passing with no checks."""
    store = target.resource("store")
    lineage = _planned_lineage(version, target) if store.made() else [version]
    return not review_waiting and not store.golden().accepted_items(lineage)


def queued_for_review(state: RunState) -> int | None:
    """How many candidates the review file of the shown curation queue lists (None: no queue shown)."""
    counts = [pending.value for shown in state.materializations
              if shown.materialization.asset_key.path[-1] == "curation_queue"
              and (pending := shown.materialization.metadata.get("pending")) is not None]
    return counts[-1] if counts else None


def _disagreement(version: str, conflicts: int, queued: int | None, curation_root: Path) -> str:
    """What to do when ``conflicts`` of the ``queued`` candidates waiting for review wait because their reviewers
    disagree: somebody has reviewed, and each needs one decision in a new review file."""
    outbox, inbox = curation_root / "outbox", curation_root / "inbox"
    undecided = (queued or 0) - conflicts
    rest = (f" ({undecided} other candidate{'s' if undecided != 1 else ''} wait{'' if undecided != 1 else 's'} for a "
            "first decision)") if undecided > 0 else ""
    many = conflicts != 1
    return (f"{conflicts} candidate{'s' if many else ''} of corpus version {version} wait{'' if many else 's'} because "
            f"reviewers disagree{rest}, so no golden set is built from {'them' if many else 'it'}. Open "
            f"{outbox / f'review-{version}.xlsx'} (or the .csv beside it), which lists each reviewer's decision of "
            "every conflict, give each candidate one decision (accept, reject or edit; the reviewers agreeing, or one "
            f"reviewer named `adjudicator:<name>` settling it), save it as a new review file into {inbox}, and run "
            "`rag-assets run` again.")


def next_step(version: str, queued: int | None, curation_root: Path, conflicts: int = 0) -> str:
    """What a run on a corpus with no accepted item yet leaves to do (``queued``: the candidates its review file
    lists, None when unknown; ``conflicts``: how many of them wait because their reviewers disagree). Sent to the
    review file only when that file lists a candidate: an empty one is a dead end (nothing to decide, so nothing
    would ever be built). Where reviewers disagree somebody has reviewed: the hint says who must decide what."""
    outbox, inbox = curation_root / "outbox", curation_root / "inbox"
    if conflicts:
        return f"\nnext step: {_disagreement(version, conflicts, queued, curation_root)}"
    if queued == 0:
        return (f"\nnext step: nothing to review for corpus version {version}: no candidate waits for review and no "
                "earlier version it continues holds accepted items, so no golden set is built. `rag-assets "
                "import-golden FILE` a golden set you have, or run on the corpus folder whose versions were reviewed "
                "(`rag-assets run --corpus FOLDER`).")
    return (f"\nnext step: nobody has reviewed corpus version {version} yet. Open {outbox / f'review-{version}.xlsx'} "
            f"(or the .csv beside it), set each candidate's decision to accept, reject or edit, save it into {inbox}, "
            "and run `rag-assets run` again: it builds the golden set from your decisions, answers and scores it. "
            "Or `rag-assets import-golden FILE` a golden set you already have.")


def _evaluation_ops(thresholds: str | None, profile: str | None, target: Driven) -> dict:
    """The evaluation's gate settings for this run as ``ops`` run config (printed, so nobody wonders which applied)."""
    if not (thresholds or profile):
        return {}
    config = {"thresholds_file": str(Path(thresholds).absolute())} if thresholds else {"profile": profile}
    print(f"evaluation thresholds: {config}")
    return {target.defs.resolve_assets_def(target.key("evaluation")).node_def.name: {"config": config}}


def _logged_days(folder: Path, production_days: dg.PartitionsDefinition) -> list[str]:
    """The newest logged days that are production partitions already (complete UTC days), oldest first."""
    from rag_assets.production.logs import logged_days

    first, last = production_days.get_first_partition_key(), production_days.get_last_partition_key()
    days = sorted(logged_days(folder))
    return [d for d in days if last is not None and first <= d <= last][-PRODUCTION_DAYS_SHOWN:]


def _run_production(instance: dg.DagsterInstance, target: Driven) -> tuple[list[dg.ExecuteInProcessResult], list[str]]:
    """Score the newest logged days of production traffic, one run per day as the log sensor would (oldest first,
    and not before a golden set exists); with the days skipped because they were scored already on the same records."""
    from rag_assets.app.production import production_waits
    from rag_assets.defs.freshness import already_scored

    logs, sample = target.resource("production_logs").folder(), target.key("production_sample")
    days = _logged_days(logs, target.defs.resolve_assets_def(sample).partitions_def) if logs.is_dir() else []
    waits = production_waits(target.resource("store"), target.resource("corpus").resolved_root()) if days else None
    if waits:
        print(f"production logs: {logs} -> days {days[0]} .. {days[-1]} not scored yet: {waits}")
        return [], []
    scored = already_scored(instance, sample, target.defs.resolve_assets_def(sample).code_versions_by_key[sample], logs,
                            days)
    if days:
        print(f"production logs: {logs} -> days {days[0]} .. {days[-1]}"
              + (f" ({len(scored)} scored already on the same records)" if scored else ""))
    job = target.job("production")
    return [job.execute_in_process(partition_key=day, instance=instance, raise_on_error=False,
                                   run_config=target.run_config(), tags={"rag_assets/trigger": "cli", **process_tags()})
            for day in days if day not in scored], sorted(scored)


#: Files a run leaves for a person, by the metadata label that names them.
ARTIFACTS = {"report": "report", "export_jsonl": "golden set (JSONL)", "export_ragas": "golden set (ragas)",
             "review_csv": "review file", "judge_review_workbook": "judge review (for your experts)"}


def artifacts(state: RunState) -> dict[str, str]:
    """The newest path of each artifact the shown results name (report, golden-set exports, review files)."""
    found: dict[str, str] = {}
    for shown in state.materializations:
        metadata = shown.materialization.metadata
        found.update({ARTIFACTS[label]: str(entry.value) for label, entry in metadata.items() if label in ARTIFACTS})
    return found


def _golden_set_empty(state: RunState) -> bool:
    """Whether the shown golden set has no item: then what fails is for want of reviewed candidates, and the
    closing line says where they wait. A run that failed for another reason (a thresholds file, a system that
    does not answer) is not sent to review."""
    return any(shown.materialization.asset_key.path[-1] == "golden_set"
               and (items := shown.materialization.metadata.get("items")) is not None and items.value == 0
               for shown in state.materializations)


def _empty_golden_hint(target: Driven, version: str) -> str:
    """What to do about an empty golden set: review the candidates waiting in the outbox, or, when the review
    rejected every one, say so; sending the expert to an outbox with nothing left to review misled (tester); and
    when reviewers disagree, say that the conflicts wait for one decision each."""
    from rag_assets.app.review_queue import awaiting_review, in_conflict

    store = target.resource("store")
    curation, candidates = _curation_root(target), store.candidates()
    if conflicts := len(in_conflict(store, version)):
        return f" {_disagreement(version, conflicts, len(awaiting_review(store, version)), curation)}"
    total, rejected = len(candidates.for_version(version)), len(candidates.for_version(version, Decision.REJECT.value))
    if not total or rejected < total:
        return f" The golden set is empty: review the candidates in {curation / 'outbox'} and drop the file in the inbox."
    return (f" Every candidate of corpus version {version} was rejected ({rejected} of {total}): nothing to build the "
            f"golden set from. Accept or edit some in a review file (the one applied is in {curation / 'processed'}) "
            f"and drop it in {curation / 'inbox'}, or `rag-assets import-golden FILE` a golden set you already have.")


def _asset_of_node(target: Driven) -> dict[str, str]:
    """The asset each top-level node of the instance's jobs computes or checks (a check of its own, such as
    rag_answers_error_budget, is a node apart), by the node's name."""
    found = {}
    for assets_def in target.defs.resolve_asset_graph().assets_defs:
        keys = [*assets_def.keys, *(check.asset_key for check in assets_def.check_keys)]
        if assets_def.is_executable and keys:
            found[assets_def.node_def.name] = keys[0].to_user_string()
    return found


def run(target: Driven, settings: Settings, review: str | None, use_sample_review: bool, thresholds: str | None = None,
        profile: str | None = None, verbose: bool = False, production: bool = True, system: dict | None = None,
        summary_json: str | None = None, accept_all: bool = False) -> int:
    terminal = sys.stderr
    with event_log(settings.home, stream=verbose) as log:
        return _run(target, settings, review, use_sample_review, thresholds, profile, verbose, production, system,
                    summary_json, log, terminal, accept_all)


def _run(target: Driven, settings: Settings, review: str | None, use_sample_review: bool, thresholds: str | None,
         profile: str | None, verbose: bool, production: bool, system: dict | None, summary_json: str | None,
         log: Path | None, out: TextIO, accept_all: bool) -> int:
    """The run itself; ``out`` is the terminal's stderr, while sys.stderr may be the event log."""
    from rag_assets.defs.freshness import held_in
    from rag_assets.defs.jobs import build_lifecycle_job
    from rag_assets.store.lock import store_run_lock

    version = _plan_version(target)  # an empty corpus, or a store that cannot be used, is told by main
    if review:
        _stage_review(Path(review), version, target)
    evaluation, store = target.key("evaluation"), target.resource("store")
    # one run per store at a time: a second one says so in one line and waits (see rag_assets.store.lock)
    with store_run_lock(store.engine(), lambda line: print(line, file=out)):
        instance = _instance(settings)
        partitions = target.lifecycle.corpus_versions.name
        if not instance.has_dynamic_partition(partitions, version):
            instance.add_dynamic_partitions(partitions, [version])
        generated = _simulated_expert_review(instance, target, version, system) if use_sample_review and not review \
            else None
        lifecycle_runs = [generated] if generated else []
        selection: list[dg.AssetKey] = []
        first_review = False
        if generated is None or generated.success:
            waiting = _review_waiting(version, target)
            selection = _changed_assets(instance, target, version, waiting, forced=[
                *([evaluation] if thresholds or profile else []),
                *([target.key("rag_answers")] if _answers_again(instance, target, version, system) else []),
                *([target.key("curated_decisions")] if accept_all else [])])
            first_review = not accept_all and _review_first(version, waiting, target)
            if first_review:
                selection = [key for key in selection if key in {target.key(name) for name in REVIEW_FIRST}]
            ops = {**(_evaluation_ops(thresholds, profile, target) if evaluation in selection else {}),
                   **(accept_all_ops(target) if accept_all else {})}
            lifecycle_runs += [_execute(instance, target, version, selection, system, ops)] if selection else []
        result = lifecycle_runs[-1] if lifecycle_runs else None
        if result is None:
            print(f"corpus version {version}: every asset is up to date (same code versions, same input data "
                  "versions, no review file waiting)")
        ok = result is None or result.success
        calibration = _run_calibration(instance, target, result)
        day_runs, scored = _run_production(instance, target) if production and ok else ([], [])
        results = [*lifecycle_runs, *([calibration] if calibration else []), *day_runs]
        lifecycle_selection = build_lifecycle_job(target.lifecycle).selection
        fresh = sorted(set(lifecycle_selection.resolve(target.defs.resolve_asset_graph())) - set(selection))
        state = with_pending_review(run_state(instance, [r.run_id for r in results], [
            *((key, held_in(target.defs, key, version)) for key in fresh),
            *((target.key("production_sample"), day) for day in scored)]), store)
    failures = failed_steps(results, _asset_of_node(target), run_secrets(system))
    standing = failed_gates(state)
    if summary_json:
        write_summary_json(state, Path(summary_json), failures, ok=all(r.success for r in results) and not standing)
    if verbose:
        print(summary(state))
    if state.materializations or state.checks:
        print("\n" + summary_table(state) + "\n")
    for label, path in {**artifacts(state), "store": store.describe(), "event log": log}.items():
        if path:
            print(f"{label}: {path}")
    print(f"open the UI: rag-assets ui   (DAGSTER_HOME={shlex.quote(str(_dagster_home(settings)))} dagster dev -m "
          f"{settings.code_location})")
    if failures:
        print("", *(failure.line() for failure in failures), sep="\n", file=out)
    if result is not None and not result.success:
        hint = _empty_golden_hint(target, version) if _golden_set_empty(state) else ""
        print(f"\nrun {result.run_id} failed for corpus version {version}.{hint}", file=out)
        return 1
    if not all(r.success for r in results):
        failed = sorted({r.job_def.name for r in results if not r.success})
        print(f"\na {' and a '.join(failed)} run failed (see above)", file=out)
        return 1
    if standing:  # results of earlier runs that still hold for these versions: their failed gates still fail
        names = ", ".join(f"{s.check.asset_key.to_user_string()}.{s.check.check_name} [{s.check.partition}]"
                          + (f" of earlier run {s.run_id[:8]}" if s.earlier else "") for s in standing)
        many = len(standing) > 1
        print(f"\n{len(standing)} gate{'s' if many else ''} failed and still stand{'' if many else 's'} for corpus "
              f"version {version}: {names}. Nothing they read changed since, so the run fails as that run did; "
              "change what failed (or the thresholds) and run again.", file=out)
        return 1
    if first_review:
        from rag_assets.app.review_queue import in_conflict

        print(next_step(version, queued_for_review(state), _curation_root(target), len(in_conflict(store, version))))
    for line in unreviewed_lines(state, _curation_root(target) / "outbox"):
        print(line)
    done = (f"run {result.run_id} succeeded for corpus version {version}" if result else
            f"nothing to run for corpus version {version} (results marked 'earlier run' still hold)")
    print(f"\n{done}" + (f"; {len(day_runs)} production days scored" if day_runs else ""))
    return 0


def _run_calibration(instance: dg.DagsterInstance, target: Driven,
                     lifecycle_run: dg.ExecuteInProcessResult | None) -> dg.ExecuteInProcessResult | None:
    """Materialize judge_calibration (and its judge_agreement check) in a run of its own, so that this run's summary
    has the judge's agreement with the experts: after a lifecycle run that succeeded, when judge-review files the
    experts returned wait in the inbox (it imports them, as the inbox sensor's job does); after one whose evaluation
    was made but failed a gate, which stops everything after it, judge_calibration too (automation materializes it
    then in a deployment). None when neither applies: the lifecycle run checked the agreement after its
    evaluation, or made none."""
    from rag_assets.calibration.review_file import is_judge_review
    from rag_assets.curation.inbox import inbox_files

    made = set() if lifecycle_run is None else {event.asset_key for event in
                                                 lifecycle_run.get_asset_materialization_events()}
    left_behind = target.key("evaluation") in made and target.key("judge_calibration") not in made
    inbox = _curation_root(target) / "inbox"
    waiting = inbox.is_dir() and any(is_judge_review(path) for path in inbox_files(inbox))
    if not (left_behind or (waiting and (lifecycle_run is None or lifecycle_run.success))):
        return None
    return target.job("judge_calibration_import").execute_in_process(
        instance=instance, raise_on_error=False, run_config=target.run_config(),
        tags={"rag_assets/trigger": "cli", **process_tags()})


def simulate(target: Driven, out: str | None) -> int:
    """Decide the current version's review queue as the simulated expert would."""
    from rag_assets.app.review_simulation import simulate_review_queue

    version = _plan_version(target)
    done = simulate_review_queue(_curation_root(target), version, Path(out) if out else None)
    print(f"simulated review of {done.rows} candidates written to {done.path}")
    return 0


def import_golden(target: Driven, path: str, file_format: str, chunks: str | None, skip_unlocated: bool) -> int:
    """Import an existing golden set as accepted items pinned to the current corpus version: all of them, or with
    ``skip_unlocated`` those it can locate in the corpus (the others listed on stderr)."""
    from rag_assets.app.golden_import import import_golden_file
    from rag_assets.text.excerpt import excerpt

    done = import_golden_file(target.resource("store"), Path(path), file_format, Path(chunks) if chunks else None,
                              lambda: _plan_version(target), skip_unlocated=skip_unlocated)
    print(f"{done.read} items read, {len(done.pinned)} located in corpus {done.corpus_version}, "
          f"{done.new} new golden items imported" + (f", {len(done.replaced)} replaced" if done.replaced else ""))
    for item in done.replaced:
        print(f"  replaced: {item.item_id} by {item.location}: reference {excerpt(item.was)} -> "
              f"{excerpt(item.reference)} (now revision {item.revision}; the golden-set versions made before keep the "
              "revision they hold)")
    for item, reason in done.unmapped:
        print(f"  not imported: {item.external_id}: {item.location}: {reason}", file=sys.stderr)
    print("`rag-assets run` (or materializing golden_set) makes a golden-set version with them")
    return 0


def export(target: Driven, file_format: str, number: int | None, out: str | None) -> int:
    """Write a golden-set version (the newest by default) in one of the export formats."""
    from rag_assets.app.golden_export import export_golden_version

    done = export_golden_version(target.resource("store"), file_format, number, Path(out) if out else None)
    print(f"golden set v{done.version.number} ({done.items} items, corpus {done.version.corpus_version}) "
          f"written to {done.path}")
    return 0


def status(target: Driven) -> int:
    """Print what the store holds (corpus versions, golden versions, the newest evaluations with their key
    figures) and what waits for a person."""
    from rag_assets.app.status import key_figures, store_status

    store = target.resource("store")
    print(f"store: {store.describe()}")
    if not store.made():
        print("nothing yet: `rag-assets run` snapshots the corpus and starts the lifecycle")
        return 0
    shown = store_status(store, _curation_root(target), _held_version(target))
    print(f"corpus versions ({len(shown.corpus_versions)}):")
    for version, created, documents, chunks, root in shown.corpus_versions:
        print(f"  {version}  {created[:19]}  {documents} documents, {chunks} chunks  {root}")
    print(f"golden versions ({len(shown.golden_versions)}):")
    for golden in shown.golden_versions:
        stale = (f", stale_new={len(golden.diff.stale)}, stale_total={len(golden.diff.stale_total)}"
                 if golden.diff.stale_total else "")
        print(f"  v{golden.number}  {golden.corpus_version}  {golden.item_count} items{stale}")
    print(f"evaluations (newest {len(shown.evaluations)}):")
    for record in shown.evaluations:
        figures = " ".join(f"{m}={v:.3f}" for m, v in key_figures(record).items())
        verdict = "passed" if record.passed else "failed"
        print(f"  {record.evaluation_id}  {record.created_at[:19]}  {record.corpus_version}  golden v{record.golden_version}"
              f"  {record.system_name}  {verdict}  {figures}")
    print("waiting:" if shown.waiting else "waiting: nothing")
    for line in shown.waiting:
        print(f"  {line}")
    return 0


def compare(target: Driven, a_id: str, b_id: str, out: str | None) -> int:
    """Print (or write) what changed from evaluation A to evaluation B, item by item; written to a file, its note on
    metrics left out (another judge configuration) is printed too."""
    from rag_assets.app.comparison import compare_evaluations
    from rag_assets.defs.assets.calibration import calibrations

    store = target.resource("store")
    compared = compare_evaluations(store, calibrations(store), a_id, b_id)
    text = compared.markdown
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"--out {out!r} cannot be written ({error.strerror or error}); for example "
                              "--out diff.md") from None
        print(f"comparison written to {out}")
        if compared.diff.note:
            print(f"note: {compared.diff.note}")
    else:
        print(text)
    return 0


#: The run a ``rag-assets calibrate`` command's judge spends in (its budget is the whole command's, in memory).
CALIBRATE_RUN = "calibrate"


def calibrate(target: Driven, path: str, embedder: str, min_kappa: float | None = None) -> int:
    """Print the configured judge's agreement with a labelled file (rag_assets.scoring.calibration); exit 1
    when ``min_kappa`` is given and the labelled metrics fail it by the judge_agreement check's own rule
    (``calibration.gate.kappa_standing``), printing the check's own reason. A file with pairs only has no kappa:
    nothing to fail.

    The judge spends within the llm resource's ``max_cost_usd`` (``RAG_ASSETS_MAX_COST_USD``), as an evaluation's
    does, for the whole command (its "run" is ``CALIBRATE_RUN``): past it, the command stops with one line saying
    so and exits 1, printing no table, since an agreement over half-judged answers is no score."""
    from rag_assets.calibration.gate import kappa_standing
    from rag_assets.llm.budget import BudgetExceeded, MemoryLedger
    from rag_assets.scoring.calibration import calibrate as run_calibration

    store, llm = target.resource("store"), target.resource("llm")
    budget = llm.budget(CALIBRATE_RUN, "calibration", None, MemoryLedger())
    try:
        report = run_calibration(Path(path), llm.judge_client(journal=store.llm_batches(), budget=budget),
                                 embedder=embedder, cache=store.llm_cache())
    except BudgetExceeded as exc:
        print(f"calibrate: judge budget: {exc}", file=sys.stderr)
        return 1
    print(report.markdown())
    kappas = report.kappas()
    if min_kappa is None or not kappas:
        return 0
    standing = kappa_standing(kappas, min_kappa)
    if standing.failed:
        print(f"--min-kappa {min_kappa:g}: {standing.reason()}", file=sys.stderr)
    return 1 if standing.failed else 0


def _kappa(value: str) -> float:
    """A --min-kappa value: a number from -1 to 1 (argparse exits 2 naming the argument otherwise)."""
    try:
        kappa = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number; e.g. --min-kappa 0.6") from None
    if not -1.0 <= kappa <= 1.0:
        raise argparse.ArgumentTypeError(f"{value!r} is not between -1 and 1; e.g. --min-kappa 0.6")
    return kappa


def _port(value: str) -> int:
    """A --port value: a TCP port number (argparse exits 2 naming the argument otherwise)."""
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number from 1 to 65535; e.g. --port 3000")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    """Every command and option (docs/cli.md is generated from it by scripts/cli_reference.py)."""
    parser = argparse.ArgumentParser(prog="rag-assets", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"rag-assets {importlib.metadata.version('rag_assets')}")
    commands = parser.add_subparsers(dest="command", required=True)
    instance = argparse.ArgumentParser(add_help=False)  # the option of every command that drives an instance
    instance.add_argument("--instance", metavar="NAME", help=INSTANCE_HELP)
    run_parser = commands.add_parser("run", parents=[instance],
                                     help="run the lifecycle job on the corpus and print a summary")
    run_parser.add_argument("--corpus", help=CORPUS_HELP)
    run_parser.add_argument("--review", help="a reviewed file to import in this run")
    run_parser.add_argument("--no-review", action="store_true",
                            help="do not stage the bundled simulated review of the sample corpus")
    run_parser.add_argument("--thresholds", help="a thresholds file for the evaluation gates (YAML or JSON)")
    run_parser.add_argument("--verbose", action="store_true", help=(
        "print every asset's metadata, not just the summary: tables, lists and reports too, as plain text (the first "
        "10 lines of each), e.g. the files the snapshot skipped and why"))
    run_parser.add_argument("--no-production", action="store_true",
                            help="do not score the production logs (default folder: data/production_logs)")
    run_parser.add_argument("--profile", choices=["general", "high_stakes", "developer", "offline"],
                            help="a threshold profile (default: general with Claude as judge, offline without)")
    run_parser.add_argument("--system", metavar="MODULE:FUNCTION",
                            help="your RAG system as a Python callable (module on PYTHONPATH or in this directory)")
    run_parser.add_argument("--system-url", metavar="URL", help="your RAG system as an HTTP endpoint (POST, JSON)")
    run_parser.add_argument("--system-header", metavar="NAME=ENVVAR", action="append", default=[],
                            help="an HTTP header for --system-url whose value is read from the environment variable "
                                 "ENVVAR (repeatable; the value is never printed)")
    run_parser.add_argument("--summary-json", metavar="FILE", help="also write the summary as JSON (for CI)")
    run_parser.add_argument("--accept-all", action="store_true",
                            help="trial mode: build the golden set from every generated candidate nobody has reviewed "
                                 "yet, labelled unreviewed (origin generated:unreviewed) everywhere it shows")
    simulate_parser = commands.add_parser("simulate-review", parents=[instance], help="decide the review queue as a simulated expert")
    simulate_parser.add_argument("--out", help="where to write the reviewed CSV (default: the bundled sample path)")
    simulate_parser.add_argument("--corpus", help=CORPUS_HELP)
    import_parser = commands.add_parser("import-golden", parents=[instance], help="import an existing golden set as accepted items")
    import_parser.add_argument(
        "path", help="the golden set file (anthropic_docs JSON, or a ragas test set as .jsonl or .csv)")
    import_parser.add_argument("--format", required=True, choices=["anthropic_docs", "ragas"], dest="file_format")
    import_parser.add_argument("--chunks", help="anthropic_docs format: the corpus chunks JSON")
    import_parser.add_argument("--skip-unlocated", action="store_true",
                               help=("import the items located in the corpus and list the others on stderr (default: "
                                     "when any item cannot be located, import nothing and exit 2)"))
    import_parser.add_argument("--corpus", help=CORPUS_HELP)
    calibrate_parser = commands.add_parser("calibrate", parents=[instance], help="check the configured judge against labelled answers (JSONL)")
    calibrate_parser.add_argument("path", help="the labelled answers (JSONL)")
    calibrate_parser.add_argument("--embedder", default="hashing", help="as the evaluation config's embedder")
    calibrate_parser.add_argument("--min-kappa", type=_kappa, metavar="X",
                                  help=("exit 1 when a labelled metric's Cohen's kappa is below X, or when no labelled metric "
                                        "has a kappa (the judge_agreement check's rule)"))
    corpus_parser = commands.add_parser("corpus-from-json", help="turn a pre-chunked JSON corpus into a corpus folder")
    corpus_parser.add_argument("chunks_json", help="a JSON list of {chunk_link, chunk_heading, text}")
    corpus_parser.add_argument("out_dir", help="the folder to write one Markdown file per chunk into")
    ui_parser = commands.add_parser("ui", help="start dagster dev on the runs this CLI made (its DAGSTER_HOME)")
    ui_parser.add_argument("--port", "-p", type=_port, help="the webserver's port (default: 3000)")
    ui_parser.add_argument("--host", help="the webserver's host (default: 127.0.0.1)")
    ui_parser.add_argument("--corpus", help=CORPUS_HELP)
    export_parser = commands.add_parser("export", parents=[instance], help="write a golden-set version as jsonl, ragas, csv or parquet")
    export_parser.add_argument("--format", required=True, choices=["jsonl", "ragas", "csv", "parquet"],
                               dest="file_format")
    export_parser.add_argument("--golden-version", type=int, help="the version number (default: the newest)")
    export_parser.add_argument("--out", help="the file to write (default: golden-v<N>.<format> here)")
    commands.add_parser("status", parents=[instance], help="list corpus versions, golden versions, evaluations and what waits for you")
    compare_parser = commands.add_parser("compare", parents=[instance], help="what changed from evaluation A to B, item by item")
    compare_parser.add_argument("eval_a", help="the earlier evaluation's id (`rag-assets status` lists them)")
    compare_parser.add_argument("eval_b", help="the later evaluation's id")
    compare_parser.add_argument("--out", help="write the markdown here instead of printing it")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = current_settings()
    except SettingsError as exc:
        problems = exc.problems
    else:
        problems = argument_problems(args, settings)
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        return _command(args, settings)
    except Exception as exc:  # faults of the machine (exit 1) and of the input (exit 2) in one line; others re-raise
        problem = machine_problem(exc)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 1
        found = domain_error(exc)
        if found is not None:  # found once read: a row of a file, an empty corpus, a bad --system or defs.yaml setting
            print(f"error: {found}", file=sys.stderr)
            return 2
        raise


def domain_error(exc: BaseException) -> RagAssetsError | None:
    """``exc`` when the project raised it, or the project's error Dagster's own exceptions were raised from: Dagster
    wraps a setting an instance's defs.yaml is refused for (``instance library: system: k must be ...``) in a
    ``ComponentTreeException`` while it builds the definitions (which printed a traceback and exited 1), and user
    code that fails in a step or a resource's init in a ``DagsterUserCodeExecutionError``. Only Dagster's are
    unwrapped (told by their package, as the first of them is not public API): any other exception raised from a
    project error is a bug, and keeps its traceback."""
    cause: BaseException | None = exc
    while cause is not None and type(cause).__module__.split(".", 1)[0] == "dagster":
        cause = cause.__cause__
    return cause if isinstance(cause, RagAssetsError) else None


_WRITABLE = "set RAG_ASSETS_HOME (or the setting that names it) to a writable folder"
#: What to do when a file cannot be written, by errno.
WRITE_ADVICE = {errno.ENOSPC: "the disk is full: free space there or set RAG_ASSETS_HOME to a folder on another disk",
                errno.EDQUOT: "the disk quota is used up: free space there or set RAG_ASSETS_HOME to another folder",
                errno.EROFS: _WRITABLE, errno.EACCES: f"make it writable, or {_WRITABLE}",
                errno.EPERM: f"make it writable, or {_WRITABLE}"}


def machine_problem(exc: BaseException) -> str | None:
    """One line for a fault of the machine rather than of the project (the store unusable, a file that cannot be
    written, Dagster's own SQLite instance on a full disk), naming the file and what to do; None for anything else."""
    from sqlalchemy.exc import DBAPIError

    from rag_assets.errors import StoreUnavailable
    from rag_assets.store.engine import database_problem

    if exc.__context__ is not None:  # the first fault is the one to tell (closing the event log may fail after it)
        first = machine_problem(exc.__context__)
        if first is not None:
            return first
    if isinstance(exc, StoreUnavailable):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in WRITE_ADVICE:
        return f"cannot write {exc.filename or 'a file'}: {exc.strerror}; {WRITE_ADVICE[exc.errno]}"
    if isinstance(exc, DBAPIError):  # the store's own errors are StoreUnavailable: this is Dagster's instance
        return database_problem(exc, str(_dagster_home(current_settings())), "the Dagster instance in")
    return None


def _command(args: argparse.Namespace, settings: Settings) -> int:
    """The chosen subcommand, once every setting is known to be usable."""
    if args.command == "ui":
        command, env = ui_command(settings, args.port, args.host, args.corpus)
        print(" ".join(command), flush=True)
        os.execve(command[0], command, env)
    if args.command != "corpus-from-json":
        importable_from_here()  # the code location, as `dagster dev -m` run here imports it
        target = driven(settings.code_location, args.instance, getattr(args, "corpus", None))
    if args.command == "run":
        system = system_run_config(args.system, args.system_url, args.system_header)
        return run(target, settings, args.review, not args.no_review, args.thresholds, args.profile, args.verbose,
                   not args.no_production, system, args.summary_json, args.accept_all)
    if args.command == "simulate-review":
        return simulate(target, args.out)
    if args.command == "export":
        return export(target, args.file_format, args.golden_version, args.out)
    if args.command == "import-golden":
        return import_golden(target, args.path, args.file_format, args.chunks, args.skip_unlocated)
    if args.command == "compare":
        return compare(target, args.eval_a, args.eval_b, args.out)
    if args.command == "status":
        return status(target)
    if args.command == "calibrate":
        return calibrate(target, args.path, args.embedder, args.min_kappa)
    from rag_assets.app.corpus_from_json import corpus_from_json

    written = corpus_from_json(Path(args.chunks_json), Path(args.out_dir))
    print(f"{len(written)} documents written to {args.out_dir}")
    return 0

