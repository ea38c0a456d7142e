"""What a release is called, from the repository's own files; fails if they disagree.

The release workflow runs it first and takes its output (``key=value`` lines, for
``$GITHUB_OUTPUT``); tests/project/test_release.py runs the same checks offline on every
change. Standard library only: the runner's Python has nothing else.

    python3 .github/release_info.py [--tag v0.1.0]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = "ghcr.io"
# A release tag: v, then the PEP 440 version of pyproject.toml in its plain form.
TAG = re.compile(r"^v(\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)$")


class ReleaseError(Exception):
    """The files name different versions or images; the message says which."""


def _yaml_scalar(path: Path, key: str) -> str:
    # Top-level scalars only (config.yaml): no YAML library on the runner.
    match = re.search(rf"^{key}:[ \t]*(.+?)[ \t]*$", path.read_text(encoding="utf-8"), re.M)
    if not match:
        raise ReleaseError(f"{path.relative_to(ROOT)} has no top-level {key}")
    return match.group(1).strip("\"'")


def info(tag: str | None = None, owner: str | None = None) -> dict[str, str]:
    """The release's version and image names; raises ReleaseError on disagreement."""
    # [project] is a plain table: a regex serves Python 3.10 too (no tomllib).
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8").split("[project]", 1)[1]
    version = re.findall(r'^version\s*=\s*"([^"]+)"', project.split("\n[", 1)[0], re.M)[0]
    if not TAG.match(f"v{version}"):
        raise ReleaseError(f"pyproject version {version} is not of the form 1.2.3 (or 1.2.3rc1)")
    config = ROOT / "addon" / "config.yaml"
    found = {
        "addon/config.yaml version": _yaml_scalar(config, "version"),
        "addon/Dockerfile WYOMING_KOKORO_VERSION": _dockerfile_arg("WYOMING_KOKORO_VERSION"),
        "addon/CHANGELOG.md's newest entry": re.findall(
            r"^## (\S+)", (ROOT / "addon" / "CHANGELOG.md").read_text(encoding="utf-8"), re.M
        )[0],
        "deploy/kubernetes/kokoro.yaml image tag": re.findall(
            r"^\s+image: \S+/wyoming-kokoro:(\S+)",
            (ROOT / "deploy" / "kubernetes" / "kokoro.yaml").read_text(encoding="utf-8"),
            re.M,
        )[0],
    }
    for where, value in found.items():
        if value != version:
            raise ReleaseError(f"{where} is {value}, pyproject.toml is {version}")
    if tag is not None and tag != f"v{version}":
        raise ReleaseError(f"tag {tag} does not name the version in the files (v{version})")

    url = _yaml_scalar(config, "url")
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+)", url)
    if not match:
        raise ReleaseError(f"addon/config.yaml url {url} is not a GitHub repository")
    repo_owner, repo = match.group(1).lower(), match.group(2).lower()
    if owner is not None and owner.lower() != repo_owner:
        raise ReleaseError(f"the workflow runs for {owner}, the add-on names {repo_owner}")
    addon_image = _yaml_scalar(config, "image")
    expected = f"{REGISTRY}/{repo_owner}/{{arch}}-addon-{_yaml_scalar(config, 'slug')}"
    if addon_image != expected:
        raise ReleaseError(f"addon/config.yaml image is {addon_image}, expected {expected}")
    return {
        "version": version,
        "tag": f"v{version}",
        "standalone_image": f"{REGISTRY}/{repo_owner}/{repo}",
        "addon_image_amd64": addon_image.replace("{arch}", "amd64"),
        "addon_image_aarch64": addon_image.replace("{arch}", "aarch64"),
        "base": _dockerfile_arg("BUILD_FROM"),
    }


def _dockerfile_arg(name: str) -> str:
    # The app's Dockerfile names its base and release itself: the Supervisor passes
    # no build arguments.
    text = (ROOT / "addon" / "Dockerfile").read_text(encoding="utf-8")
    match = re.search(rf"^ARG {name}=(\S+)", text, re.M)
    if not match:
        raise ReleaseError(f"addon/Dockerfile has no ARG {name}=...")
    return match.group(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", help="the pushed tag, e.g. v0.1.0")
    args = parser.parse_args(argv)
    try:
        values = info(args.tag, os.environ.get("GITHUB_REPOSITORY_OWNER"))
    except ReleaseError as err:
        print(f"release_info: {err}", file=sys.stderr)
        return 1
    for key, value in values.items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
