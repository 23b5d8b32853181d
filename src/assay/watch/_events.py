"""The events of a watch: a verdict that changed, a drift alarm raised or cleared.

Each is a JSON object (``schema: assay.watch.event/v1``) posted to ``--webhook`` and shown on
the console. Events compare a look with the one before it; the first look after a start only
establishes the state (a restart rebuilds it from the data, and would otherwise announce every
test again).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from assay.judge import Verdict
from assay.watch._status import TestStatus, WatchStatus

__all__ = ["EVENT_SCHEMA", "events_between"]

EVENT_SCHEMA = "assay.watch.event/v1"
"""The ``schema`` field of every event."""


def _event(kind: str, test: TestStatus, when: str, **extra: object) -> dict[str, Any]:
    return {
        "schema": EVENT_SCHEMA,
        "event": kind,
        "test": test.test_id,
        "time": when,
        **extra,
        "verdict": test.verdict.value,
        "trials": test.trials,
        "pass_rate": test.pass_rate,
        "interval": [test.low, test.high],
        "threshold": test.threshold,
        "drift_alarm": test.drift_alarm,
    }


def events_between(before: WatchStatus, after: WatchStatus) -> list[dict[str, Any]]:
    """What changed from ``before`` to ``after``: verdict changes, alarms raised or cleared.

    A test first seen in ``after`` is compared with an INCONCLUSIVE test without alarm.
    """
    when = datetime.now(UTC).isoformat(timespec="seconds")
    earlier = {t.test_id: t for t in before.tests}
    found: list[dict[str, Any]] = []
    for test in after.tests:
        old = earlier.get(test.test_id)
        was = old.verdict if old is not None else Verdict.INCONCLUSIVE
        if test.verdict != was:
            found.append(_event("verdict_changed", test, when, previous_verdict=was.value))
        alarmed = old.drift_alarm if old is not None else False
        if test.drift_alarm and not alarmed:
            found.append(_event("drift_alarm_raised", test, when, since_trial=test.alarm_since))
        elif alarmed and not test.drift_alarm:
            found.append(_event("drift_alarm_cleared", test, when))
    return found
