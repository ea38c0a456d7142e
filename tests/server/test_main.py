"""The server command's flags → Settings: every setting comes from a flag."""

from __future__ import annotations

import dataclasses

from wyoming_kokoro import __main__ as command
from wyoming_kokoro.settings import Settings


def test_every_setting_is_given_or_translated_from_a_flag() -> None:
    groups = {f.name: f.default_factory for f in dataclasses.fields(Settings) if f.name != "debug"}
    fields = {(group, f.name) for group, cls in groups.items() for f in dataclasses.fields(cls)}
    given = {(group, name) for group, names in command._AS_GIVEN.items() for name in names}
    assert given | command._TRANSLATED == fields
    assert not given & command._TRANSLATED
    flags = {param.name for param in command.main.params}
    assert {name for _, name in given} | {"debug"} <= flags, {n for _, n in given} - flags


def test_the_translated_settings() -> None:
    defaults = {param.name: param.default for param in command.main.params if param.name}
    params = {
        **defaults,
        "zeroconf": "",
        "zeroconf_interface": ("10.0.0.1",),
        "zeroconf_address": "192.168.1.5",
        "data_dir": (),
        "no_streaming": True,
        "no_normalize": False,
        "http": "tcp://127.0.0.1:8880",
        "cors_origin": ("http://a",),
        "max_text_chars": 100,
    }
    settings = command._settings_from(params)
    assert settings.discovery.name is not None and settings.discovery.name.startswith("kokoro-")
    assert settings.discovery.interfaces == ("10.0.0.1",)
    assert settings.discovery.address == "192.168.1.5"
    assert len(settings.model.data_dirs) == 1  # the default data dir
    assert (settings.speech.streaming, settings.worker.normalize) == (False, True)
    assert (settings.http.uri, settings.http.cors_origins) == (
        "tcp://127.0.0.1:8880",
        ("http://a",),
    )
    assert settings.speech.max_text_chars == 100
