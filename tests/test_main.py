"""The server command's flags → Settings: every setting comes from a flag."""

from __future__ import annotations

import dataclasses

from wyoming_kokoro import __main__ as command
from wyoming_kokoro.settings import Settings


def test_every_setting_is_given_or_translated_from_a_flag() -> None:
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert set(command._AS_GIVEN) | command._TRANSLATED == fields
    flags = {param.name for param in command.main.params}
    assert set(command._AS_GIVEN) <= flags, set(command._AS_GIVEN) - flags


def test_the_translated_settings() -> None:
    defaults = {param.name: param.default for param in command.main.params if param.name}
    params = {
        **defaults,
        "zeroconf": "",
        "zeroconf_interface": ("10.0.0.1",),
        "data_dir": (),
        "no_streaming": True,
        "no_normalize": False,
        "cors_origin": ("http://a",),
    }
    settings = command._settings_from(params)
    assert settings.zeroconf_name is not None and settings.zeroconf_name.startswith("kokoro-")
    assert settings.zeroconf_interfaces == ("10.0.0.1",)
    assert len(settings.data_dirs) == 1  # the default data dir
    assert (settings.streaming, settings.normalize) == (False, True)
    assert settings.cors_origins == ("http://a",)
