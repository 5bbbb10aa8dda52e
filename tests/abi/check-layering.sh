#!/usr/bin/env bash
# Checks the layer order of src/ by its #include lines.
#
# usage: check-layering.sh <source-root>
#
# Layers, bottom to top: base boot wire am coll ft mpi io task.  A file in
# src/<layer>/ may include headers of its own layer and of layers below it,
# never of a layer above.  Inside src/wire/, each transport folder
# (src/wire/shm/, src/wire/tcp/, ...) may include src/wire/*.h and its own
# files but not another transport's: transports meet only through the wire
# interface.  Public headers (include/) may be included from anywhere.
#
# An include is resolved as the compiler does it: first beside the including
# file, then against src/ (the layers' include root); `#include <...>` is
# checked only when it names a file under src/.
set -euo pipefail

LAYERS=(base boot wire am coll ft mpi io task)

if [[ $# -ne 1 ]]; then
    echo "usage: $0 <source-root>" >&2
    exit 2
fi
root=$(cd "$1" && pwd)
src=$root/src
[[ -d $src ]] || { echo "FAIL: no src/ under $root" >&2; exit 1; }

# layer_index <name>: position in LAYERS, or -1.
layer_index() {
    local i
    for i in "${!LAYERS[@]}"; do
        [[ ${LAYERS[$i]} == "$1" ]] && { echo "$i"; return; }
    done
    echo -1
}

# transport_of <path relative to src>: the transport folder of a wire file.
transport_of() {
    local rel=$1
    if [[ $rel == wire/*/* ]]; then
        rel=${rel#wire/}
        echo "${rel%%/*}"
    fi
}

violations=0
files=0
report() {
    echo "$1:$2: $3"
    violations=$((violations + 1))
}

while IFS= read -r -d '' file; do
    rel_file=${file#"$src"/}
    [[ $rel_file == */* ]] || continue # files directly in src/ belong to no layer
    file_layer=${rel_file%%/*}
    file_index=$(layer_index "$file_layer")
    if [[ $file_index -lt 0 ]]; then
        report "src/$rel_file" 1 "folder src/$file_layer/ is not a known layer; add it to LAYERS in $0"
        continue
    fi
    files=$((files + 1))
    file_transport=$(transport_of "$rel_file")

    # "<line>:<form><path>" where form is " for quotes and < for angle brackets.
    while IFS=: read -r line spec; do
        form=${spec:0:1}
        path=${spec:1}
        target=
        if [[ $form == '"' && -e $(dirname "$file")/$path ]]; then
            target=$(realpath -m "$(dirname "$file")/$path")
        elif [[ -e $src/$path ]]; then
            target=$(realpath -m "$src/$path")
        fi
        [[ -n $target && $target == "$src"/*/* ]] || continue
        rel_target=${target#"$src"/}
        target_layer=${rel_target%%/*}
        target_index=$(layer_index "$target_layer")
        if [[ $target_index -gt $file_index ]]; then
            report "src/$rel_file" "$line" \
                "layer '$file_layer' includes src/$rel_target of higher layer '$target_layer'"
        fi
        target_transport=$(transport_of "$rel_target")
        if [[ -n $file_transport && -n $target_transport &&
            $file_transport != "$target_transport" ]]; then
            report "src/$rel_file" "$line" \
                "transport '$file_transport' includes src/$rel_target of transport '$target_transport'"
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$file" |
        sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]+).*/\1:\2\3/')
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

if [[ $violations -ne 0 ]]; then
    echo "FAIL: $violations layering violation(s); order, bottom to top: ${LAYERS[*]}"
    exit 1
fi
echo "OK: $files files under src/ respect the layer order (${LAYERS[*]})"
