#!/usr/bin/env bash
# Links the model cut that the image ships (slim.sh made it at build time) into the
# server's cache, unless the cache has that entry already; then runs its arguments.
# The cache is a volume, hidden from the image's files, and the entry must stay
# writable there: the device's optimized copies and the voices' priors go beside the
# parts. The parts themselves stay in the image, linked, not copied.
# Usage: cut-seed.sh [COMMAND...]   ($KOKORO_CACHE_DIR: the cache; the venv: beside this)
set -euo pipefail
shipped="$(dirname "$(readlink -f "$0")")/../cut"
cache="${KOKORO_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/wyoming-kokoro}"

seed() {
    local entry name target partial part
    for entry in "${shipped}"/split*/; do
        [[ -f "${entry}verified" ]] || continue
        name="$(basename "${entry}")"
        target="${cache}/${name}"
        # A link left by an older image that no longer ships this part: cut again.
        for part in "${target}"/*.onnx; do
            if [[ -L "${part}" && ! -e "${part}" ]]; then
                rm -rf "${target}"
                break
            fi
        done
        [[ -e "${target}" ]] && continue
        # set -e does not hold in a function called before ||: each step says so.
        partial="${cache}/.${name}.seed.$$"
        rm -rf "${partial}"
        mkdir -p "${partial}/priors" 2> /dev/null || return 1
        ln -s "${entry}"*.onnx "${partial}/" || return 1
        if [[ -d "${entry}priors" ]]; then
            cp -R "${entry}priors/." "${partial}/priors/" || return 1
        fi
        cp "${entry}verified" "${partial}/verified" || return 1
        # Atomic, as the server's own cut is: a server never sees half an entry.
        mv -T "${partial}" "${target}" 2> /dev/null || rm -rf "${partial}"
    done
}

# A cache that cannot be written only means the server cuts (or decodes whole) itself.
seed || echo "cut-seed.sh: could not link the shipped model cut into ${cache}" >&2
if (($#)); then
    exec "$@"
fi
