#!/usr/bin/env bash
# Compile time and peak compiler memory of translation units that use regcmd, with each
# compiler given (default: g++ clang++), at -O2 and the compilers' default constexpr
# limits. Each figure is the median of 3 compilations. Prints the figures and ROW lines
# for scripts/run-bench.sh's table.
#   (a) the headers only          (b) one matmul program
#   (c) the matmul family (4 precision pairs) over a 10-shape grid: 40 programs
#   (d) chained plans of 10, 100 and 1000 tasks (8-row M tiles of the template split at K = 2048)
#   (e) one conv program (Mesa's example A)   (f) MobileNet v1's first block: 3 conv programs
#   (g) one lookup-table activation (SiLU: its two 513-entry tables computed at compile time)
#   (h) a LLaMA FFN block at decode as one graph (4096 -> 11008 -> 4096: 17 tasks, a SiLU
#       table, a split K summed on the device; docs/graph.md)
# Usage: scripts/compile-time.sh [COMPILER...]; REGCMD_INCLUDE_DIRS overrides where the
# headers are found (default: the three include directories and the release build's include/).
# scripts/compile-time.sh --instructions: the instructions g++'s compiler proper executes
# (valgrind's callgrind: exact and repeatable, unlike seconds) for (a), (b) and a TU per op
# family that includes only that family's header (and (b') builds one matmul from it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
include_dirs=${REGCMD_INCLUDE_DIRS:-"$root/include $root/registers/include $root/programs/include $root/build/release/include"}
instructions=0
if [ "${1:-}" = --instructions ]; then
  instructions=1
  shift
  command -v valgrind >/dev/null || { echo "compile-time.sh: --instructions needs valgrind (Debian package 'valgrind')" >&2; exit 1; }
fi
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(g++ clang++)
[ -x /usr/bin/time ] || { echo "compile-time.sh: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
[ -f "$root/build/release/include/regcmd/version.hpp" ] || [ -n "${REGCMD_INCLUDE_DIRS:-}" ] ||
  { echo "compile-time.sh: configure the release preset first (cmake --preset release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

head='#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
using namespace regcmd;'

printf '%s\nint main() { return 0; }\n' "$head" >"$work/a_headers.cpp"

printf '%s\nconstexpr auto p = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256}>();
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' "$head" >"$work/b_one.cpp"

{
  printf '%s\ntemplate <matmul_spec S> constexpr auto op = fixed<S>();\nint main() {\n  unsigned n = 0;\n' "$head"
  for pair in "fp16 fp32" "fp16 fp16" "int8 int32" "int4 int16"; do
    set -- $pair
    for shape in "1 64 64" "4 128 64" "8 256 128" "16 512 256" "32 256 512" "1 1024 1024" "4 1024 2048" \
                 "8 2048 64" "2 4096 512" "1 8192 8192"; do
      set -- $pair $shape
      printf '  n += op<matmul_spec{.dtype = precision::%s, .out_dtype = precision::%s, .M = %s, .K = %s, .N = %s}>.code.entry_count;\n' "$@"
    done
  done
  printf '  return static_cast<int>(n & 1);\n}\n'
} >"$work/c_family.cpp"

for tasks in 10 100 1000; do
  printf '%s
constexpr auto p = fixed<plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8 * %s, .K = 2048, .N = 64,
                                                 .sched = schedule::template_split},
                                      plan_options{.k_slice = 2048}}>();
static_assert(p.code.task_count == %s);
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' "$head" "$tasks" "$tasks" >"$work/d_plan$tasks.cpp"
done

printf '%s
constexpr auto p = fixed<conv_spec{.dtype = conv_data::uint8, .H = 20, .W = 20, .C = 80, .out_channels = 40, .kernel_h = 3,
    .kernel_w = 3, .padding = conv_padding::same, .input = {0.02f, 100}, .weights = {0.005f, 140}, .output = {0.04f, 90},
    .bias = true}>();
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' "$head" >"$work/e_conv.cpp"

printf '%s
constexpr quantization q{6.0f / 255, 0};
constexpr auto stem = fixed<conv_spec{.dtype = conv_data::uint8, .H = 224, .W = 224, .C = 3, .out_channels = 32, .kernel_h = 3,
    .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .input = {0.0078f, 128},
    .weights = {0.02f, 120}, .output = q, .bias = true, .activation = output_activation::relu6}>();
constexpr auto dw = fixed<conv_spec{.dtype = conv_data::uint8, .H = 112, .W = 112, .C = 32, .out_channels = 32, .kernel_h = 3,
    .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .input = q, .weights = {0.05f, 130}, .output = q,
    .bias = true, .activation = output_activation::relu6}>();
constexpr auto pw = fixed<conv_spec{.dtype = conv_data::uint8, .H = 112, .W = 112, .C = 32, .out_channels = 64, .input = q,
    .weights = {0.02f, 125}, .output = q, .bias = true, .activation = output_activation::relu6}>();
int main() { return static_cast<int>((stem.code.entry_count + dw.code.entry_count + pw.code.entry_count) & 1); }\n' \
  "$head" >"$work/f_mobilenet.cpp"

printf '%s
constexpr auto p = fixed<act_spec{.fn = activation::silu, .M = 64, .N = 256}>();
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' "$head" >"$work/g_lut.cpp"

printf '%s
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/graph.hpp>
constexpr auto p = fixed<llama_ffn(1, 4096, 11008)>();
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' "$head" >"$work/h_ffn.cpp"

flags=(-std=c++20 -O2)
for d in $include_dirs; do flags+=("-I$d"); done

if [ "$instructions" = 1 ]; then
  for family in matmul conv sdp activation pooling graph; do
    printf '#include <regcmd/programs/%s.hpp>\nint main() { return 0; }\n' "$family" >"$work/family_$family.cpp"
  done
  printf '#include <regcmd/programs/matmul.hpp>
using namespace regcmd;
constexpr auto p = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256}>();
int main() { return static_cast<int>(p.code.entry_count & 1); }\n' >"$work/family_matmul_one.cpp"
  for tu in a_headers b_one family_matmul family_matmul_one family_conv family_sdp family_activation family_pooling family_graph; do
    rm -f "$work"/cg.*
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/cg.%p" \
      g++ "${flags[@]}" -c "$work/$tu.cpp" -o "$work/out.o" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    # the compiler proper's process: the one that ran cc1plus
    count=$(grep -l cc1plus "$work"/cg.* | xargs grep -h '^summary:' | awk '{print $2}')
    printf '%-20s %14s instructions\n' "$tu" "$count"
  done
  exit 0
fi

# Median seconds and median peak RSS (MB) of 3 compilations: "seconds megabytes".
measure() {
  local cxx=$1 tu=$2 runs=()
  for _ in 1 2 3; do
    if ! /usr/bin/time -f '%e %M' -o "$work/time" "$cxx" "${flags[@]}" -c "$tu" -o "$work/out.o" 2>"$work/err"; then
      cat "$work/err" >&2
      echo "compile-time.sh: $cxx failed on $(basename "$tu")" >&2
      exit 1
    fi
    runs+=("$(tail -1 "$work/time")")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p | awk '{printf "%.2f %.0f\n", $1, $2 / 1024}'
}

for cxx in "${compilers[@]}"; do
  command -v "$cxx" >/dev/null || { echo "compile-time.sh: no $cxx here, skipped" >&2; continue; }
  name="$cxx $("$cxx" -dumpversion)"
  group="compile, $name"
  declare -A s=() mb=()
  for tu in a_headers b_one c_family d_plan10 d_plan100 d_plan1000 e_conv f_mobilenet g_lut h_ffn; do
    read -r s[$tu] mb[$tu] < <(measure "$cxx" "$work/$tu.cpp")
    printf '%-22s %-12s %6s s %6s MB\n' "$name" "$tu" "${s[$tu]}" "${mb[$tu]}"
  done
  awk -v g="$group" -v a="${s[a_headers]}" -v b="${s[b_one]}" -v c="${s[c_family]}" \
      -v d10="${s[d_plan10]}" -v d100="${s[d_plan100]}" -v d1000="${s[d_plan1000]}" \
      -v ma="${mb[a_headers]}" -v mb_="${mb[b_one]}" -v mc="${mb[c_family]}" -v md="${mb[d_plan1000]}" \
      -v e="${s[e_conv]}" -v f="${s[f_mobilenet]}" -v me="${mb[e_conv]}" -v mf="${mb[f_mobilenet]}" \
      -v lut="${s[g_lut]}" -v mlut="${mb[g_lut]}" -v ffn="${s[h_ffn]}" -v mffn="${mb[h_ffn]}" 'BEGIN {
    t = "\t"
    print "ROW" t g t "(a) headers only" t a " s, " ma " MB" t t
    print "ROW" t g t "(b) one matmul program" t b " s, " mb_ " MB" t t
    printf "ROW%s%s%s(b) - (a)%s%.2f s%s<= 0.3 s%s%s\n", t, g, t, t, b - a, t, t, (b - a <= 0.3 ? "hit" : "MISSED")
    print "ROW" t g t "(c) 4 pairs x 10 shapes, 40 programs" t c " s, " mc " MB" t t
    print "ROW" t g t "(d) plans of 10 / 100 / 1000 tasks" t d10 " / " d100 " / " d1000 " s, " md " MB at 1000" t t
    # Linear: the cost of a task from 100 to 1000 tasks within 1.5x of its cost from 10 to 100.
    early = (d100 - d10) / 90; late = (d1000 - d100) / 900
    ratio = early > 0 ? late / early : 1
    printf "ROW%s%s%s(d) ms per task, 10->100 / 100->1000%s%.2f / %.2f%slinear (<= 1.5x)%s%s\n", t, g, t, t, early * 1000, late * 1000, t, t, (ratio <= 1.5 ? "hit" : "MISSED")
    printf "ROW%s%s%s(d) 1000 tasks%s%.2f s%s<= 10 s%s%s\n", t, g, t, t, d1000, t, t, (d1000 <= 10 ? "hit" : "MISSED")
    print "ROW" t g t "(e) one conv program (example A)" t e " s, " me " MB" t t
    printf "ROW%s%s%s(e) - (a); (e) / (a)%s%.2f s; %.2f%s<= 0.3 s%s%s\n", t, g, t, t, e - a, e / a, t, t, (e - a <= 0.3 ? "hit" : "MISSED")
    print "ROW" t g t "(f) MobileNet block, 3 conv programs" t f " s, " mf " MB" t t
    printf "ROW%s%s%s(f) - (a); (f) / (a)%s%.2f s; %.2f%s<= 1 s%s%s\n", t, g, t, t, f - a, f / a, t, t, (f - a <= 1 ? "hit" : "MISSED")
    print "ROW" t g t "(g) one LUT activation (SiLU)" t lut " s, " mlut " MB" t t
    printf "ROW%s%s%s(g) - (a)%s%.2f s%s<= 0.5 s%s%s\n", t, g, t, t, lut - a, t, t, (lut - a <= 0.5 ? "hit" : "MISSED")
    print "ROW" t g t "(h) FFN block at decode, one graph (17 tasks)" t ffn " s, " mffn " MB" t t
    printf "ROW%s%s%s(h); (h) / (a)%s%.2f s; %.2f%s<= 3 s%s%s\n", t, g, t, t, ffn, ffn / a, t, t, (ffn <= 3 ? "hit" : "MISSED")
    print "ROW" t g t "raised -fconstexpr-ops-limit / -fconstexpr-steps" t "none" t "none" t "hit"
  }'
done
