"""``--webhook``: an event on every verdict change and alarm, retried, never blocking the watch."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from receiver import Receiver
from servers import start_watch, stop, wait_for_log
from streams import write_trials

from assay.cli import run
from assay.watch import EVENT_SCHEMA, Watcher, WebhookSender, events_between


def test_events_name_verdict_changes_and_alarms(tmp_path: Path) -> None:
    watcher = Watcher((str(tmp_path),))
    write_trials(tmp_path, [True] * 300)
    before = watcher.look(final=True)
    assert events_between(before, before) == []
    write_trials(tmp_path, [False] * 120, first_index=300)
    after = watcher.look(final=True)
    events = {e["event"]: e for e in events_between(before, after)}
    assert events["verdict_changed"]["previous_verdict"] == "PASS"
    assert events["verdict_changed"]["verdict"] == after.tests[0].verdict.value != "PASS"
    raised = events["drift_alarm_raised"]
    assert raised["schema"] == EVENT_SCHEMA and raised["test"] == "support"
    assert 300 < raised["since_trial"] <= 420 and raised["trials"] == 420


def test_posting_retries_with_backoff_and_never_blocks() -> None:
    receiver = Receiver(fail_first=2)
    sender = WebhookSender(receiver.url, backoff=0.05).start()
    try:
        sender.send({"event": "verdict_changed", "n": 1})
        assert receiver.wait_for(1) == [{"event": "verdict_changed", "n": 1}]
        assert receiver.attempts == 3 and sender.delivered == 1
    finally:
        sender.stop()
        receiver.close()
    stalled = Receiver(stall=3.0)
    sender = WebhookSender(stalled.url, timeout=10).start()
    try:
        for i in range(20):
            sender.send({"n": i})
        # every send returned before the receiver answered the first: the watch goes on
        assert stalled.attempts == 0
    finally:
        sender.stop(timeout=0.5)
        stalled.close()


def test_a_receiver_that_never_answers_is_given_up_and_counted() -> None:
    sender = WebhookSender("http://127.0.0.1:9/none", attempts=2, backoff=0.01, timeout=1)
    sender.start()
    sender.send({"event": "x"})
    sender.stop()
    assert (sender.delivered, sender.failed) == (0, 1)


def test_a_bad_webhook_url_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["watch", str(tmp_path), "--webhook", "ftp://x"]) == 2
    assert "--webhook must be an http:// or https:// URL" in capsys.readouterr().err


@pytest.mark.slow
def test_the_running_watch_posts_when_a_test_starts_failing(tmp_path: Path) -> None:
    receiver = Receiver(fail_first=1)
    traces = tmp_path / "traces"
    write_trials(traces, [True] * 200)
    args = [str(traces), "--poll-interval", "0.2", "--grace", "0", "--webhook", receiver.url]
    watch, _ = start_watch(args, tmp_path / "watch.log")
    try:
        wait_for_log(tmp_path / "watch.log", "pass rate")  # the first look: no event for it
        time.sleep(0.5)
        assert receiver.events == []
        write_trials(traces, [False] * 150, first_index=200)
        kinds = {e["event"] for e in receiver.wait_for(2, timeout=60)}
        assert kinds == {"verdict_changed", "drift_alarm_raised"}, receiver.events
    finally:
        assert stop(watch) == 0
        receiver.close()
    log = (tmp_path / "watch.log").read_text()
    assert "PASS → " in log and "drift alarm raised" in log  # and shown in the log
