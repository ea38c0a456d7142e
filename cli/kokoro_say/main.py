"""kokoro-say: speak text, a file or stdin into an audio file, offline."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Any

import click

from wyoming_kokoro import __version__, flags, options
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.catalog.places import default_data_dir
from wyoming_kokoro.catalog.presets import choose
from wyoming_kokoro.catalog.presets_file import load_presets
from wyoming_kokoro.catalog.voices import G2P_LANGUAGES, VoiceError, default_voice
from wyoming_kokoro.settings import EngineSettings, ModelSettings, SpeechSettings, from_params

from . import long_form, one_file, stopping
from .voice_list import list_voices

_LOGGER = logging.getLogger("kokoro_say")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("text", required=False)
@click.option(
    "-f",
    "--file",
    "file",
    metavar="PATH",
    help="Read the text from a file ('-' = stdin); a document (.epub, .pdf, .html, .md, "
    ".txt, .ssml) is read into chapters.",
)
@click.option(
    "-o",
    "--output",
    metavar="PATH",
    help="Audio file to write; '-' = stdout (raw PCM unless --format); BOOK.m4b: an "
    "audiobook with chapter marks; DIR/: a file per chapter.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["wav", "flac", "ogg", "mp3", "raw"]),
    help="Audio format, when the extension does not say it (raw: 16-bit PCM, 24 kHz, mono).",
)
@click.option(
    "--captions",
    metavar="PATH",
    help="Also write each word's time: SRT, WebVTT or JSON by the extension.",
)
@flags.apply(options.SHARED[:-3], short={"voice": "-v", "speed": "-s"}, hide_advanced=True)
@click.option(
    "-l",
    "--lang",
    help=f"Language of the text ({', '.join(G2P_LANGUAGES)}); default: the voice's own "
    "(Japanese and Chinese voices read text without kana or ideographs as English).",
)
@click.option("--list-voices", is_flag=True, help="Show the voice catalog and exit.")
@click.option(
    "--list-chapters",
    "--dry-run",
    "list_chapters",
    is_flag=True,
    help="Show the document's chapters, words and estimated time, and exit.",
)
@click.option("--ssml", is_flag=True, help="Read the text or file as SSML.")
@flags.apply((options.DOWNLOAD, options.DOWNLOAD_URL), hide_advanced=True)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, only errors.")
@flags.apply((options.DEBUG,))
@flags.help_all()
@click.version_option(__version__, prog_name="kokoro-say")
def main(**params: Any) -> None:
    """Speak TEXT into an audio file (-o out.wav), offline, with Kokoro-82M.

    The format follows the extension (wav, flac, ogg, mp3) or --format.

    \b
    More options (model files, tuning): --help-all. All explained:
    https://github.com/wyoming-kokoro/wyoming-kokoro/blob/main/docs/options.md
    """
    # SIGTERM, SIGINT and SIGHUP end the run as an error does: the partial file is
    # removed and espeak's backends are finalized.
    stopping.stop_cleanly()
    config = SayConfig.from_params(params)
    # onnxruntime's telemetry writes a session file into the temporary directory and
    # a database into ~/.cache on import; an offline tool has no use for it.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    logging.basicConfig(
        level=logging.DEBUG if config.debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        try:
            _run(config)
        except (AssetError, VoiceError, ValueError, OSError) as err:
            raise click.ClickException(str(err)) from err
    except BaseException:
        stopping.exit_if_stopped()
        raise


@dataclass(frozen=True)
class SayConfig:
    """Everything kokoro-say was asked to do: its own options, then the settings groups
    it shares with the server (the same fields, defaults and checks)."""

    text: str | None
    file: str | None
    output: str | None
    fmt: str | None
    captions: str | None
    lang: str | None
    list_voices: bool
    list_chapters: bool
    ssml: bool
    quiet: bool
    debug: bool
    model: ModelSettings
    engine: EngineSettings
    speech: SpeechSettings

    @staticmethod
    def from_params(params: dict[str, Any]) -> SayConfig:
        data_dirs = tuple(params["data_dir"]) or (default_data_dir(),)
        return SayConfig(
            **{name: params[name] for name in _OWN},
            model=from_params(ModelSettings, params, data_dirs=data_dirs),
            engine=from_params(EngineSettings, params),
            speech=from_params(SpeechSettings, params),
        )


_OWN = (
    *("text", "file", "output", "fmt", "captions", "lang", "list_voices", "list_chapters"),
    *("ssml", "quiet", "debug"),
)


def _download(config: SayConfig) -> None:
    from wyoming_kokoro.catalog.download import ConsoleProgress, DownloadError, download_model

    model = config.model
    assert model.download
    try:
        download_model(
            model.download,
            model.data_dirs[0],
            base_url=model.download_url,
            progress=None if config.quiet else ConsoleProgress(),
        )
    except DownloadError as err:
        raise click.ClickException(str(err)) from err


def _run(config: SayConfig) -> None:
    model, speech = config.model, config.speech
    if model.download:
        _download(config)
        if not (config.text or config.file or config.output):
            return
    assets = resolve(model.model, model.voices, list(model.data_dirs))
    _LOGGER.debug("Using %s", assets.source)
    presets = load_presets(model.data_dirs, assets.voice_names)
    if config.list_voices:
        list_voices(assets.voice_names, presets)
        return
    # --speed left at its default: a preset's own speed applies
    asked_speed = speech.speed if speech.speed != options.SPEED.default else None
    choice = choose(
        speech.voice or default_voice(assets.voice_names),
        assets.voice_names,
        presets,
        asked_speed or options.SPEED.default,
    )
    speed = asked_speed or choice.speed
    lead, tail = choice.lead_silence, choice.tail_silence
    if lead is not None or tail is not None:
        # A preset's own silence before and after the speech wins, as on the server.
        speech = replace(
            speech,
            lead_silence=speech.lead_silence if lead is None else lead,
            tail_silence=speech.tail_silence if tail is None else tail,
        )
        config = replace(config, speech=speech)
    if long_form.wanted(config):  # a document, chapters, resume, every core
        long_form.run(config, assets, presets, choice, speed)
        return
    one_file.run(config, assets, presets, choice, speed)


if __name__ == "__main__":
    main()
