"""Declarative automation: what keeps the lifecycle fresh after a corpus change or an import.

The corpus sensor snapshots a new corpus version; from there each asset runs when its upstream
updated (``eager``), and never past a failed blocking check: a bad golden set stops the RAG run
and the evaluation (``all_deps_blocking_checks_passed``). The golden set also reacts to imported
decisions, but does not wait for them: a new corpus version has none yet and still needs its
carried-over golden set. Curated decisions themselves come only from the inbox sensor.
"""

import dagster as dg

from rag_assets.defs.lifecycle import Lifecycle

AC = dg.AutomationCondition

EAGER_PAST_CHECKS = (AC.eager() & AC.all_deps_blocking_checks_passed()).with_label("eager, past passed checks")



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
