"""A lexicon entry added while a worker is loaded reaches the next request: the
rescan that reads it again (on a describe, as Home Assistant makes every 30 s) has
the loaded worker give way, between pieces, to one that has it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize, voice_names

pytestmark = pytest.mark.model

TEXT = "Ask Zorp to lock the door."


def test_a_lexicon_entry_added_between_two_requests_is_heard_in_the_second(
    tmp_path: Path, listener
) -> None:
    with ServerProcess("--data-dir", str(tmp_path), "--idle-timeout", "600") as srv:
        before = run(synthesize(srv.uri, TEXT))
        assert before.errors == [], "".join(srv.log)
        (worker,) = srv.workers()  # loaded, and kept for minutes
        (tmp_path / "lexicon.txt").write_text("zorp\tthe house\n")
        run(voice_names(srv.uri))  # a describe: the data dirs are looked at again
        assert srv.wait_for(lambda: "lexicon changed" in "".join(srv.log), 10)
        after = run(synthesize(srv.uri, TEXT))
        assert after.errors == [], "".join(srv.log)
        replaced = worker not in srv.workers()
    assert replaced  # between the two requests, not at the idle timeout
    # Before, only that "house" is not said (the name itself is the model's to read).
    listener.check_later(TEXT, before.audio, margin=1.0, unheard="house")
    listener.check_later("Ask the house to lock the door.", after.audio, heard_as="house")
