#!/bin/bash
# h200_run.sh - how docs/GPU-H200.md's capture was made: vk_passes on every
# queue family of an NVIDIA H200 (no Vulkan loader installed there), then
# the fixture runs. Runs on the device machine from the repository root,
# with a release build of vk_passes beside this script and the loader debs
# in .gl/ (docs/GPU-H200.md gives every step). Writes to $OUT.
#   E, I, N: elements, ALU iterations, frames (H200 defaults below).
G=$(cd "$(dirname "$0")" && pwd)
B=$G/vk_passes
E=${E:-16777216} I=${I:-64} N=${N:-1000}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
if [ ! -e /usr/share/vulkan/icd.d/nvidia_icd.json ] && [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  echo "using VK_DRIVER_FILES=$VK_DRIVER_FILES"
fi
uname -a; ldd --version | head -1; nvidia-smi -L
ldconfig -p | grep libvulkan
echo "== fixture: auto family (compute, 64-bit), $N frames"
timeout 120 $B --frames $N --elements $E --iterations $I --out $OUT/h200_vk_passes.cap --check > $OUT/run64.txt 2>&1
echo "rc=$?" >> $OUT/run64.txt; cat $OUT/run64.txt
F32=$(grep -E '^ +[0-9]+: .*timestampValidBits 32$' $OUT/run64.txt | head -1 | sed -E 's/^ +([0-9]+):.*/\1/')
echo "== 32-bit family: '$F32'"
if [ -n "$F32" ]; then
  timeout 120 $B --queue-family $F32 --frames $N --elements $E --out $OUT/h200_vk_passes_32bit.cap --check > $OUT/run32.txt 2>&1
  echo "rc=$?" >> $OUT/run32.txt; cat $OUT/run32.txt
fi
echo "== compute family timed as if 32 bits"
timeout 120 $B --frames $N --elements $E --iterations $I --pretend-valid-bits 32 --out /tmp/p32.cap --check 2>&1 | grep -vE '^ +[0-9]+: ' ; echo "rc=${PIPESTATUS[0]}"
NF=$(grep -cE '^ +[0-9]+: ' $OUT/run64.txt)
for ((q=0; q<NF; q++)); do
  echo "== family $q, 50 frames"
  timeout 60 $B --queue-family $q --frames 50 --elements $((E/4)) --out /tmp/f$q.cap --check 2>&1 | grep -vE '^ +[0-9]+: |^  [a-z]+ +depth' ; echo "rc=${PIPESTATUS[0]}"
done
