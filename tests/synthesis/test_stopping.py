"""The stop switch shared by whole calls and the cut model: which call a stop hits."""

from __future__ import annotations

from typing import Any

import pytest

from wyoming_kokoro.synthesis.stopping import Interrupted, Interruptible, Stops, StopSwitch


class _Session:
    """Fails a run as onnxruntime does when its run options say terminate."""

    def run(self, names: Any, feed: Any, options: Any) -> str:
        if options.terminate:
            raise RuntimeError("Exiting due to terminate flag being set to true.")
        return "audio"


def test_a_stop_for_the_running_call_interrupts_it() -> None:
    switch = StopSwitch()
    with pytest.raises(Interrupted), switch.running("a") as options:
        assert switch.interrupt("a")
        _Session().run(None, {}, options)


def test_a_stop_that_comes_just_before_its_call_still_applies() -> None:
    switch = StopSwitch()
    assert not switch.interrupt("a")  # nothing runs yet: kept for "a"
    with pytest.raises(Interrupted), switch.running("a") as options:
        _Session().run(None, {}, options)
    with switch.running("a") as options:  # spent: the retry goes ahead
        assert _Session().run(None, {}, options) == "audio"


def test_a_stop_for_another_call_or_a_forgotten_one_hits_nothing() -> None:
    switch = StopSwitch()
    switch.interrupt("b")
    with switch.running("a") as options:
        assert not switch.interrupt("b")
        assert _Session().run(None, {}, options) == "audio"
    switch.interrupt("a")
    switch.forget("a")
    with switch.running("a") as options:
        assert _Session().run(None, {}, options) == "audio"


def test_an_error_that_is_not_a_stop_is_not_called_one() -> None:
    switch = StopSwitch()
    with pytest.raises(ValueError), switch.running("a"):
        raise ValueError("bad input")


def test_a_wrapped_session_passes_the_switch_options() -> None:
    session = Interruptible(_Session())
    with pytest.raises(Interrupted), session.switch.running("a"):
        session.switch.interrupt("a")
        session.run(None, {})


def test_a_stop_never_outlives_the_call_it_was_for() -> None:
    plans, windows = StopSwitch(), StopSwitch()
    stops = Stops(plans, windows)
    stops.let_others_go("a")  # nothing of "a" runs: the stop waits for its next window
    assert stops.spent("a") and not stops.spent("a")  # spent once
    with windows.running("a") as options:
        assert not options.terminate  # the spent stop does not hit the next window
    stops.interrupt("a")
    stops.done("a")  # its call ended first: the stop goes with it
    with plans.running("a") as options, windows.running("a") as window_options:
        assert not options.terminate and not window_options.terminate
    assert not stops.spent("a")
    assert not Stops(plans, None).spent("a")


def test_a_call_that_ends_keeps_another_calls_ask_to_let_others_go() -> None:
    # A newcomer's ask for "b" (parked, its next window to come) came while "a" ran its
    # last window: "a" ending must not drop it, or "b" goes on past the window it
    # should stop after and every newcomer waits longer (bench B11: 0.05 s each).
    windows = StopSwitch()
    stops = Stops(StopSwitch(), windows)
    stops.let_others_go("b")
    stops.done("a")
    assert stops.spent("b")
    with windows.running("b") as options:
        assert not options.terminate  # spent with the ask
