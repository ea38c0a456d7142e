"""kokoro-say: speak text, a file or stdin into an audio file, offline."""

from __future__ import annotations

import io
import logging
import os
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

from wyoming_kokoro import __version__, flags, options
from wyoming_kokoro.audio import SAMPLE_RATE, Pauses, silence
from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.catalog.places import default_data_dir
from wyoming_kokoro.catalog.presets import choose
from wyoming_kokoro.catalog.presets_file import load_presets
from wyoming_kokoro.catalog.voices import G2P_LANGUAGES, VoiceError, default_voice
from wyoming_kokoro.settings import EngineSettings, ModelSettings, SpeechSettings, from_params
from wyoming_kokoro.text.g2p import load_lexicons
from wyoming_kokoro.timeline import Timeline

from . import long_form, stopping, word_times
from .captions import CaptionFile
from .formats import available_formats, format_for
from .output import AudioSink
from .progress import PieceLines
from .reading import read_text
from .voice_list import list_voices

if TYPE_CHECKING:
    from wyoming_kokoro.synthesis.voicing import Voiced, Voicing

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
    if not config.output:
        raise click.UsageError("no output: give -o FILE (or -o - for raw PCM on stdout)")
    try:
        fmt = format_for(config.output, config.fmt)
    except ValueError as err:
        raise click.UsageError(str(err)) from err
    if fmt not in available_formats():
        raise click.ClickException(f"cannot write {fmt} here; available: {available_formats()}")
    text = read_text(config.text, config.file)
    if not text.strip():
        raise click.ClickException("the text is empty")

    from wyoming_kokoro.catalog.voices import g2p_language, parse_voice
    from wyoming_kokoro.synthesis.engine import Engine  # heavy: after argument checks
    from wyoming_kokoro.synthesis.loudness import for_voices_file
    from wyoming_kokoro.synthesis.voicing import Voiced
    from wyoming_kokoro.text.pieces import split_text
    from wyoming_kokoro.text.words import cjk_words

    # An unknown voice or a text with nothing to say fails before the model loads.
    preset_lang = presets[choice.preset].language if choice.preset else None
    voice = parse_voice(choice.voice, assets.voice_names)
    lang = g2p_language(voice, text, config.lang or preset_lang)
    pieces = split_text(text, lang, paragraphs=True)
    pauses = speech.pauses.over(choice.sentence_pause, choice.paragraph_pause)
    if not pieces:
        raise click.ClickException("the text has nothing to say (only symbols or markup)")
    # A caption file or an output that cannot be written fails before the model
    # loads; word times need the model's cut, made now if it is not there yet.
    captions = CaptionFile(config.captions) if config.captions else None
    try:
        with AudioSink(config.output, fmt) as sink:
            if captions is not None:
                word_times.prepare(assets, config.engine.effective_threads, config.quiet)
            engine = Engine(assets, config.engine, lexicon=load_lexicons(model.data_dirs))
            voiced = Voiced(engine, for_voices_file(assets.voices))
            voicing = voiced.voicing(
                choice.voice, speed, choice.volume * speech.volume, pauses.sentence
            )
            timed = captions is not None
            timeline = _speak(config, sink, pieces, voiced, voicing, lang, timed, pauses)
        if captions is not None:
            if not any(word.start is not None for word in timeline.words):
                raise click.ClickException(
                    "no word times came with the speech: the audio is written, the "
                    "captions are not (--debug says why)"
                )
            captions.write(timeline.words, spaced=not cjk_words(text, lang))
            if timeline.unmatched:
                click.echo(
                    f"kokoro-say: no times for {len(timeline.unmatched)} words not found "
                    f"in what was said: {' '.join(timeline.unmatched)}",
                    err=True,
                )
    finally:
        if captions is not None:
            captions.discard()


def _speak(
    config: SayConfig,
    sink: AudioSink,
    pieces: list[str],
    voiced: Voiced,
    voicing: Voicing,
    lang: str,
    timed: bool,
    pauses: Pauses,
) -> Timeline:
    """The pieces into the output; their words' times if `timed`."""
    from wyoming_kokoro.text.pieces import PARAGRAPH

    speech = config.speech
    timeline = Timeline()
    long = not config.quiet and len(pieces) > 3
    show_bar = long and sys.stderr.isatty()
    lines = PieceLines(len(pieces)) if long and not show_bar else None
    with click.progressbar(
        pieces, label="Speaking", file=sys.stderr if show_bar else io.StringIO()
    ) as bar:
        lead = silence(speech.lead_silence / 1000)
        sink.write(lead)
        samples = len(lead)
        ended = False  # a paragraph's pause is due before the next piece
        for index, piece in enumerate(bar):
            if piece == PARAGRAPH:
                ended = True
                continue
            if ended:
                gap = silence(pauses.after_paragraph(voicing.speed) / 1000)
                sink.write(gap)
                samples += len(gap)
                ended = False
            # Only a listener on stdout waits for the first audio: a file is spoken
            # in whole calls, never cut for latency.
            quick = index == 0 and str(config.output) == "-"
            if timed:
                for pcm, words in voiced.timed(piece, voicing, lang, awaited=quick):
                    timeline.add(words, samples / SAMPLE_RATE)
                    sink.write(pcm)
                    samples += len(pcm)
            else:
                for pcm in voiced.speak(piece, voicing, lang, awaited=quick):
                    sink.write(pcm)
            if lines is not None:
                lines(index + 1)
        sink.write(silence(speech.tail_silence / 1000))
    timeline.close()
    return timeline


if __name__ == "__main__":
    main()
