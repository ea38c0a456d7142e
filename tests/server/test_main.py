"""The server command's flags → Settings: every setting comes from a flag."""

from __future__ import annotations

import dataclasses

from wyoming_kokoro import __main__ as command
from wyoming_kokoro.settings import Settings, option_of


def test_every_setting_comes_from_a_flag_of_the_server() -> None:
    flags = {param.name for param in command.main.params}
    groups = [f.default_factory for f in dataclasses.fields(Settings) if f.name != "debug"]
    sources = [option_of(f) for cls in groups for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    named = {name for name, _ in sources if name is not None}
    assert named <= flags, named - flags
    assert len(named) == len([name for name, _ in sources if name is not None]), "a flag twice"
    # Only the optimized copy has no flag (bench/ compares it).
    assert [name for name, _ in sources].count(None) == 1


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
    settings = command.settings_from(params)
    assert settings.discovery.name is not None and settings.discovery.name.startswith("kokoro-")
    assert settings.discovery.interfaces == ("10.0.0.1",)
    assert settings.discovery.address == "192.168.1.5"
    assert len(settings.model.data_dirs) == 1  # the default data dir
    assert (settings.speech.streaming, settings.engine.normalize) == (False, True)
    assert (settings.http.uri, settings.http.cors_origins) == (
        "tcp://127.0.0.1:8880",
        ("http://a",),
    )
    assert settings.speech.max_text_chars == 100
