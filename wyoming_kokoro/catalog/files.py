"""The known Kokoro v1.0 model and voices files: names, sizes and sha256; `AssetError`
when a model or voices file cannot be used.

Every model file is checked against this table before it is loaded, because a
truncated or wrong file otherwise fails deep inside onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass


class AssetError(RuntimeError):
    """A model or voices file is missing, truncated or corrupt."""


@dataclass(frozen=True)
class KnownFile:
    """A file published with Kokoro v1.0 (upstream release model-files-v1.0)."""

    name: str
    size: int
    sha256: str


MODEL_FILES: dict[str, KnownFile] = {
    "fp32": KnownFile(
        "kokoro-v1.0.onnx",
        325_532_387,
        "7d5df8ecf7d4b1878015a32686053fd0eebe2bc377234608764cc0ef3636a6c5",
    ),
    "fp16": KnownFile(
        "kokoro-v1.0.fp16.onnx",
        177_464_787,
        "c1610a859f3bdea01107e73e50100685af38fff88f5cd8e5c56df109ec880204",
    ),
    "int8": KnownFile(
        "kokoro-v1.0.int8.onnx",
        92_361_271,
        "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
    ),
}

VOICES_FILE = KnownFile(
    "voices-v1.0.bin",
    28_214_398,
    "bca610b8308e8d99f32e6fe4197e7ec01679264efed0cac9140fe9c29f1fbf7d",
)

# Preferred first when several model files sit in a data directory.
MODEL_PREFERENCE = ("fp32", "fp16", "int8")

DEFAULT_DOWNLOAD_URL = (
    "https://github.com/thewh1teagle/kokoro-onnx/releases/download/model-files-v1.0"
)

BY_NAME: dict[str, KnownFile] = {f.name: f for f in (*MODEL_FILES.values(), VOICES_FILE)}
