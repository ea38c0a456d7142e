"""kokoro-say's everyday job: a text, a file or stdin spoken into one audio file (or
raw PCM on stdout), with its captions, piece by piece as the server speaks it."""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING

import click

from wyoming_kokoro.audio import SAMPLE_RATE, Pauses, silence
from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Choice, Preset
from wyoming_kokoro.text.g2p import load_lexicons
from wyoming_kokoro.timeline import Timeline

from . import word_times
from .captions import CaptionFile
from .formats import available_formats, format_for
from .output import AudioSink
from .progress import PieceLines
from .reading import read_text

if TYPE_CHECKING:
    from wyoming_kokoro.synthesis.voicing import Voiced, Voicing

    from .main import SayConfig


def run(
    config: SayConfig, assets: Assets, presets: dict[str, Preset], choice: Choice, speed: float
) -> None:
    """Speak the text into `config.output`; errors before the model loads where they can."""
    model, speech = config.model, config.speech
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
