"""A thin, typed wrapper around the podman command line for the image tests.

Every call goes through the storage directories script/test-images chose (its
``KOKORO_IMAGES_PODMAN`` prefix), so nothing touches the machine's own podman state.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from dataclasses import dataclass, field

# crun fails on this kind of host's cgroup mode, and raising rlimits is refused.
RUN_FLAGS = [
    "--runtime",
    "runc",
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=1024:1024",
]


class PodmanError(AssertionError):
    """A podman command failed; the message carries its output."""


def podman_prefix() -> list[str]:
    """The podman command with its storage options, as script/test-images set it."""
    prefix = os.environ.get("KOKORO_IMAGES_PODMAN")
    if not prefix:
        raise PodmanError(
            "KOKORO_IMAGES_PODMAN is not set: run the image tests with script/test-images"
        )
    return shlex.split(prefix)


def podman(
    *args: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``podman ARGS``; raise :class:`PodmanError` with its output if it fails."""
    command = [*podman_prefix(), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise PodmanError(
            f"{shlex.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}"
        )
    return result


@dataclass
class Container:
    """A container started with ``podman run -d``; removed (with force) on close."""

    name: str
    image: str
    removed: bool = field(default=False, init=False)

    @classmethod
    def start(
        cls,
        name: str,
        image: str,
        command: list[str],
        *,
        volumes: dict[str, str] | None = None,
        read_only: bool = False,
        entrypoint: str | None = None,
        env: dict[str, str] | None = None,
        flags: list[str] | None = None,
    ) -> Container:
        """``podman run -d`` on the caller's network (host networking)."""
        podman("rm", "--force", "--ignore", name)
        flags = [*RUN_FLAGS, "--name", name, "--network", "host", *(flags or [])]
        for volume, target in (volumes or {}).items():
            flags += ["--volume", f"{volume}:{target}"]
        if read_only:
            # As documented for Docker: `--read-only --tmpfs /tmp` (podman would add
            # tmpfs mounts on /run and /var/tmp as well; Docker does not).
            flags += ["--read-only", "--read-only-tmpfs=false", "--tmpfs", "/tmp"]
        if entrypoint is not None:
            flags += ["--entrypoint", entrypoint]
        for key, value in (env or {}).items():
            flags += ["--env", f"{key}={value}"]
        podman("run", "--detach", *flags, image, *command)
        return cls(name, image)

    def logs(self) -> str:
        result = podman("logs", self.name, check=False)
        return result.stdout + result.stderr

    def state(self) -> str:
        return podman("inspect", "--format", "{{.State.Status}}", self.name).stdout.strip()

    def wait_for_log(self, text: str, timeout: float) -> str:
        """Wait until the log contains ``text``; fail early if the container exits."""
        deadline = time.monotonic() + timeout
        while True:
            logs = self.logs()
            if text in logs:
                return logs
            if self.state() not in ("running", "created", "configured"):
                raise PodmanError(f"{self.name} exited before {text!r}:\n{logs[-4000:]}")
            if time.monotonic() > deadline:
                raise PodmanError(
                    f"no {text!r} from {self.name} in {timeout:.0f} s:\n{logs[-4000:]}"
                )
            time.sleep(0.25)

    def exec(self, *command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return podman("exec", self.name, *command, check=False, timeout=timeout)

    def healthcheck(self, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """The image's own HEALTHCHECK command, run by podman now."""
        return podman("healthcheck", "run", self.name, check=False, timeout=timeout)

    def health(self) -> str:
        # podman 4 keeps the result under .State.Healthcheck (Docker: .State.Health).
        result = podman("inspect", "--format", "{{.State.Healthcheck.Status}}", self.name)
        return result.stdout.strip()

    def signal(self, name: str) -> None:
        podman("kill", "--signal", name, self.name)

    def wait(self, timeout: float) -> int:
        """Wait for the container to exit; return its exit code."""
        result = podman("wait", self.name, timeout=timeout)
        return int(result.stdout.strip().splitlines()[-1])

    def remove(self) -> None:
        if not self.removed:
            podman("rm", "--force", "--time", "5", "--ignore", self.name, timeout=60)
            self.removed = True

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def run_once(
    image: str,
    *command: str,
    entrypoint: str | None = None,
    network: str = "none",
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """``podman run --rm IMAGE COMMAND`` in the foreground."""
    flags = [*RUN_FLAGS, "--network", network, "--no-healthcheck"]
    if entrypoint is not None:
        flags += ["--entrypoint", entrypoint]
    return podman("run", "--rm", *flags, image, *command, check=check, timeout=timeout)


def image_inspect(image: str, template: str) -> str:
    return podman("image", "inspect", "--format", template, image).stdout.strip()


def volume_path(volume: str) -> str:
    """Where a named volume's files are on this host."""
    return podman("volume", "inspect", "--format", "{{.Mountpoint}}", volume).stdout.strip()
