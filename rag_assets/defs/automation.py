"""Declarative automation: what keeps the lifecycle fresh after a corpus change or an import.

The corpus sensor snapshots a new corpus version; from there each asset runs when its upstream
updated (``eager``), and never past a failed blocking check: a bad golden set stops the RAG run
and the evaluation (``PAST_CHECKS``), in the run that built it or later. The golden set also reacts to imported
decisions, but does not wait for them: a new corpus version has none yet and still needs its
carried-over golden set. Curated decisions themselves come only from the inbox sensor.
"""

import dagster as dg

from rag_assets.defs.lifecycle import Lifecycle

AC = dg.AutomationCondition

#: Per dependency: its blocking checks passed, or it is requested on this tick together with them (``WITH_ITS_ASSET``),
#: so the asset joins its run, where a failed blocking check stops the steps that read it. Dagster's own
#: ``all_deps_blocking_checks_passed`` asks whether the checks themselves are requested, and a separate
#: ``@asset_check`` had no condition (and would be evaluated beside the assets that read its asset, in name order: the
#: evaluation before ``rag_answers:rag_answers_pinned``), so the golden set, the RAG answers and the evaluation of a new
#: corpus version took three runs of automation, each starting a run worker and a step server.
PAST_CHECKS = AC.all_deps_match(
    AC.will_be_requested() | AC.all_checks_match(AC.check_passed(), blocking_only=True)
).with_label("all deps past their blocking checks, or requested with them")
EAGER_PAST_CHECKS = (AC.eager() & PAST_CHECKS).with_label("eager, past passed checks")

#: The condition of a separate blocking ``@asset_check`` whose asset gates automation (``PAST_CHECKS``): requested
#: whenever its asset is. Without one, a run of automation that also holds an asset with checks of its own (the
#: evaluation's gates) names only those, and would run the RAG answers past a golden set nobody checked.
WITH_ITS_ASSET = AC.any_deps_match(AC.will_be_requested()).with_label("with its asset")



def golden_set_condition(lifecycle: Lifecycle) -> dg.AutomationCondition:
    """The golden set's condition; it names the instance's own curated_decisions."""
    decisions = lifecycle.assets("curated_decisions")
    return (
        AC.in_latest_time_window()
        & (AC.newly_missing() | AC.any_deps_updated()).since_last_handled()
        & ~AC.any_deps_missing().ignore(decisions)
        & ~AC.any_deps_in_progress()
        & ~AC.in_progress()
        & AC.all_deps_blocking_checks_passed().ignore(decisions)
    ).with_label("eager on the snapshot or new decisions")
