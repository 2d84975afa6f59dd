#!/usr/bin/env bash
# size.sh KPACK CODEC BUILD_DIR TAG — the kpack image of the TAG kernel, packed with CODEC straight
# from the stock bzImage (relocation table included), must be no larger than the stock image.
set -euo pipefail

[[ $# -eq 4 ]] || { echo "usage: $0 KPACK CODEC BUILD_DIR TAG" >&2; exit 2; }
kpack=$1 codec=$2 dir=$3/boot tag=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/fixture.sh"
boot_fixture "$dir" "$tag"
image=$dir/size-$codec-$tag.bzImage
"$kpack" "--$codec" "$vmlinuz" -o "$image"
stock=$(stat -c %s "$vmlinuz") packed=$(stat -c %s "$image")
echo "size: stock $stock bytes, kpack $codec $packed bytes ($(( (packed - stock) * 10000 / stock )) per 10000)"
(( packed <= stock )) || { echo "size: FAIL: the kpack $codec image is larger than the stock one" >&2; exit 1; }
