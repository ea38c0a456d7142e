"""deploy/kubernetes/, offline: the objects refer to each other and to this release.

images/test_kubernetes.py runs the Deployment for real with ``podman kube play``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"


@pytest.fixture(scope="module")
def objects() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            assert doc["kind"] not in found, f"two {doc['kind']} objects"
            found[doc["kind"]] = doc
    assert set(found) == {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    }
    return found


def container(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    (only,) = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    return dict(only)


def test_image_is_this_release(objects: dict[str, dict[str, Any]]) -> None:
    from support.release_info import release_info

    info = release_info.info()
    assert container(objects)["image"] == f"{info['standalone_image']}:{info['version']}"


def test_selectors_match(objects: dict[str, dict[str, Any]]) -> None:
    deployment = objects["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert objects["Service"]["spec"]["selector"] == labels
    assert objects["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    target = objects["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])


def test_ports_and_probes(objects: dict[str, dict[str, Any]]) -> None:
    spec = container(objects)
    ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
    assert ports == {"wyoming": 10200, "http": 8880}
    args = spec["args"]
    assert args[args.index("--http") + 1] == "tcp://0.0.0.0:8880"
    service = {p["name"]: (p["port"], p["targetPort"]) for p in objects["Service"]["spec"]["ports"]}
    assert service == {"wyoming": (10200, "wyoming"), "http": (8880, "http")}
    ready = spec["readinessProbe"]["httpGet"]
    assert (ready["path"], ready["port"]) == ("/health", 8880)
    live = spec["livenessProbe"]["exec"]["command"]
    assert live[:3] == ["python3", "-m", "wyoming_kokoro.healthcheck"]
    assert live[live.index("--uri") + 1] == "tcp://127.0.0.1:10200"


def test_read_only_root_with_data_and_tmp_volumes(objects: dict[str, dict[str, Any]]) -> None:
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    spec = container(objects)
    assert spec["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsUser"] == 1000  # the image's own user
    mounts = {m["mountPath"]: m["name"] for m in spec["volumeMounts"]}
    assert set(mounts) == {"/data", "/tmp"}
    assert {v["name"] for v in pod["volumes"]} == set(mounts.values())


def test_resources_hold_a_speaking_replica(objects: dict[str, dict[str, Any]]) -> None:
    resources = container(objects)["resources"]

    def mib(value: str) -> int:
        assert value.endswith("Mi"), value
        return int(value[:-2])

    # README's bench: idle server with HTTP up to 70 MB; worker at most about 400 MB
    # speaking (max-call-tokens 120); Mandarin's dictionary adds 180 MB.
    assert mib(resources["requests"]["memory"]) >= 70 + 400
    assert mib(resources["limits"]["memory"]) >= 70 + 400 + 180
    # Threads are automatic: the server reads the CPU limit from its cgroup.
    assert "--threads" not in container(objects)["args"]


def test_autoscaling_and_disruption_budget(objects: dict[str, dict[str, Any]]) -> None:
    hpa = objects["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert (
        hpa["spec"]["minReplicas"] >= 2 and hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    )
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    pdb = objects["PodDisruptionBudget"]
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]
