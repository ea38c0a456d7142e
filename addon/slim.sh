#!/usr/bin/env bash
# Makes the virtual environment that pip just filled smaller. Both images run it in the
# same RUN step as pip, so what it removes never reaches a layer. Usage: slim.sh VENV
set -euo pipefail
venv="$1"
site="$("${venv}/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"

# Sudachi's dictionary (193 MB, from pyopenjtalk-plus's dependencies) is read only for
# a kanji OpenJTalk does not know, to find a word reading for it; the embedded voices
# otherwise never touch it. A stand-in with no words answers the same lookups ("not a
# word"), so such a kanji gets its Unihan reading, which pyopenjtalk falls back to
# anyway. It still needs the parts of speech of Sudachi's unknown-word rules and a
# connection matrix as wide as their ids (5968): 71 MB, nearly all of it zeros.
dic="${site}/sudachidict_core/resources/system.dic"
if [[ -f "${dic}" && "$(stat -c %s "${dic}")" -gt 100000000 ]]; then
    work="$(mktemp -d)"
    printf '5969 5969\n0 0 0\n' > "${work}/matrix.def"
    surface=0
    while IFS= read -r pos; do
        # One entry per part of speech, under a surface no text contains.
        word="kokoro-stand-in-${surface}"
        printf '%s,0,0,0,%s,%s,%s,%s,*,A,*,*,*,*\n' "${word}" "${word}" "${pos}" "${word}" "${word}"
        surface=$((surface + 1))
    done > "${work}/lex.csv" << 'POS'
名詞,固有名詞,一般,*,*,*
名詞,固有名詞,人名,一般,*,*
名詞,固有名詞,地名,一般,*,*
名詞,数詞,*,*,*,*
名詞,普通名詞,サ変可能,*,*,*
名詞,普通名詞,一般,*,*,*
感動詞,一般,*,*,*,*
空白,*,*,*,*,*
補助記号,一般,*,*,*,*
POS
    rm "${dic}"
    "${venv}/bin/sudachipy" build -m "${work}/matrix.def" -d "stand-in without words" \
        -o "${dic}" "${work}/lex.csv" > /dev/null
    rm -rf "${work}"
fi

# The embedded model cut for decoding in windows (python -m wyoming_kokoro.synthesis.split
# cuts it and keeps it only if its audio is bit-identical to the whole model's), once
# here instead of on each device's first start, where it takes minutes of CPU and onnx.
# The server's cache is a volume, so the start links the shipped entry in (cut-seed.sh).
# Optimized copies hold this build machine's CPU layouts: left for the device to make.
work="$(mktemp -d)"
mkdir -p "${venv}/cut"
# An emulated build (qemu-user, as for another architecture's image) can crash
# onnxruntime's CPU probe: then the image keeps onnx, and the device cuts the model at
# its first start, as a server does for a model of the user's own.
if KOKORO_CACHE_DIR="${work}" "${venv}/bin/python3" -m wyoming_kokoro.synthesis.split; then
    for entry in "${work}"/split*/; do
        [[ -f "${entry}verified" ]] || continue
        rm -rf "${entry}"*.opt
        mv "${entry%/}" "${venv}/cut/"
    done
fi
rm -rf "${work}"
if compgen -G "${venv}/cut/split*/verified" > /dev/null; then
    # onnx (and ml_dtypes, only onnx's) edits graphs: with the cut shipped, nothing
    # imports it at run time; a model of the user's own is decoded whole instead.
    "${venv}/bin/python3" -m pip uninstall --yes --quiet onnx ml_dtypes
else
    echo "slim.sh: the model could not be cut here; the device cuts it at first start" >&2
fi

# The libraries' own test suites (numpy, onnx's backend tests, …) are never imported.
find "${site}" -mindepth 2 -type d -name tests -prune -exec rm -rf {} +
# pip is not needed to run; the image is rebuilt, not upgraded in place.
"${venv}/bin/python3" -m pip uninstall --yes --quiet pip
