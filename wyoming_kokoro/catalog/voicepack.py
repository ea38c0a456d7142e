"""The add-on's first start: the 54 upstream voices fetched into its data dir.

The embedded model is the very file upstream publishes as ``kokoro-v1.0.int8.onnx``, so
the voices file (28 MB) is all that is missing for Kokoro's own voices. The add-on's
run script starts this in the background and execs the server at once, which speaks
with the embedded voices meanwhile::

    python3 -m wyoming_kokoro.catalog.voicepack --data-dir /data --restart-pid "$$" \\
        --port 10200 --port 8880

Failed attempts are retried with growing pauses and resume where they stopped
(``download_file``: ``.part`` file, HTTP Range, size and sha256 checked). Once the file
is there, the server picks its voices (``af_heart`` the default) only at start-up, so
it is asked to restart, with SIGTERM, at a moment when nobody is connected to it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from wyoming_kokoro.catalog.assets import check_file
from wyoming_kokoro.catalog.download import DownloadError, LogProgress, download_file
from wyoming_kokoro.catalog.files import DEFAULT_DOWNLOAD_URL, VOICES_FILE, AssetError, KnownFile

_LOGGER = logging.getLogger("wyoming_kokoro.voicepack")

_ESTABLISHED, _LISTEN = "01", "0A"  # TCP states as /proc/net/tcp writes them


class ServerGone(Exception):
    """The server this download is for has exited; a new start will resume it."""


def connections(ports: Iterable[int], proc_net: Path = Path("/proc/net")) -> tuple[bool, int]:
    """Whether the first port is listening, and how many connections the ports hold."""
    wanted = list(ports)
    listening, established = False, 0
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc_net / name).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 4:
                continue
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if port not in wanted:
                continue
            if fields[3] == _LISTEN and port == wanted[0]:
                listening = True
            elif fields[3] == _ESTABLISHED:
                established += 1
    return listening, established


def wait_until_idle(
    ports: list[int],
    quiet_s: float = 3.0,
    poll_s: float = 0.5,
    alive: Callable[[], bool] = lambda: True,
    proc_net: Path = Path("/proc/net"),
) -> None:
    """Return once the server listens and no client has been connected for *quiet_s*."""
    quiet_since: float | None = None
    while True:
        if not alive():
            raise ServerGone
        listening, busy = connections(ports, proc_net)
        now = time.monotonic()
        if not listening or busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= quiet_s:
            return
        time.sleep(poll_s)


def pauses(first_s: float, longest_s: float) -> Iterator[float]:
    """The pauses between attempts: doubling from *first_s*, at most *longest_s*."""
    pause = first_s
    while True:
        yield pause
        pause = min(pause * 2, longest_s)


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    # A server restarted by s6 while an older download still runs starts another one:
    # the older one notices and stops, this one waits for it, then resumes its .part.
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def fetch(
    data_dir: Path,
    base_url: str,
    *,
    known: KnownFile | None = None,
    timeout: float = 30.0,
    first_pause_s: float = 10.0,
    longest_pause_s: float = 3600.0,
    alive: Callable[[], bool] = lambda: True,
) -> Path:
    """Download *known* (the voices file) into *data_dir* until it is there, verified."""
    known = known or VOICES_FILE
    dest = data_dir / known.name
    url = f"{base_url.rstrip('/')}/{known.name}"

    logged = LogProgress()  # the add-on's log: a line every few seconds

    def progress(name: str, done: int, total: int) -> None:
        if not alive():
            raise ServerGone
        logged(name, done, total)

    data_dir.mkdir(parents=True, exist_ok=True)
    with _exclusive(data_dir / f"{known.name}.lock"):
        for pause in pauses(first_pause_s, longest_pause_s):
            try:
                return download_file(url, dest, known, progress, timeout)
            except DownloadError as err:
                _LOGGER.warning("Voice pack not downloaded yet: %s; next try in %.0f s", err, pause)
            deadline = time.monotonic() + pause
            while time.monotonic() < deadline:
                if not alive():
                    raise ServerGone
                time.sleep(min(1.0, pause))
    raise AssertionError("unreachable")  # pauses() never ends


def _is_server(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(os.path.basename(arg) == b"wyoming-kokoro" for arg in cmdline[:2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wyoming_kokoro.catalog.voicepack")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument(
        "--url",
        default=os.environ.get("KOKORO_DOWNLOAD_URL") or DEFAULT_DOWNLOAD_URL,
        help="where voices-v1.0.bin is (default: $KOKORO_DOWNLOAD_URL or upstream)",
    )
    parser.add_argument("--restart-pid", type=int, help="the server to restart once done")
    parser.add_argument(
        "--port", type=int, action="append", default=[], help="the server's ports (first: Wyoming)"
    )
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--first-pause", type=float, default=10.0)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    pid = args.restart_pid
    parent = os.getppid()

    def alive() -> bool:
        # The server replaced (exec) the run script that started us: it is our parent
        # until it exits, and then we are handed to init.
        return pid is None or os.getppid() == parent

    try:
        check_file(args.data_dir / VOICES_FILE.name, VOICES_FILE)
        return 0  # there since an earlier start, which the server has already seen
    except AssetError:
        pass
    try:
        fetch(
            args.data_dir,
            args.url,
            timeout=args.timeout,
            first_pause_s=args.first_pause,
            alive=alive,
        )
        if pid is None:
            return 0
        _LOGGER.info("Voice pack ready (54 voices); restarting the server once it is idle")
        wait_until_idle(args.port or [10200], alive=alive)
    except ServerGone:
        _LOGGER.info("Server gone; the voice pack download resumes at the next start")
        return 0
    except OSError as err:
        _LOGGER.error("Voice pack cannot be written to %s: %s", args.data_dir, err)
        return 1
    if not _is_server(pid):
        return 0
    os.kill(pid, signal.SIGTERM)
    return 0


if __name__ == "__main__":
    sys.exit(main())
