#!/bin/sh
# Writes the dumps of the tools' memory tests into DIR, each about 64 MiB, by doubling a seed:
#   big.txt         a commented text dump, 8 lines of 127 bytes doubled 16 times (512 Ki entries)
#   a.bin, b.bin    binary dumps of 8 Mi entries, the first 8 entries of tests/data/small.bin
#                   doubled 20 times; in b.bin every CNA_CBUF_CON0 is 0xc1 (WEIGHT_BANK 12)
#                   where a.bin has 0xb1 (WEIGHT_BANK 11)
#   make_big_dumps.sh SMALL_BIN DIR
set -e
small=$1
dir=$2
mkdir -p "$dir"
cd "$dir"

double() {
  n=0
  while [ "$n" -lt "$2" ]; do
    cat "$1" "$1" > "$1.tmp"
    mv "$1.tmp" "$1"
    n=$((n + 1))
  done
}

head -c 64 "$small" > a.bin
{
  head -c 16 "$small"
  printf '\100\020\301\000\000\000\001\002'  # 0x0201000000c11040, little-endian
  tail -c +25 "$small" | head -c 40
} > b.bin
double a.bin 20
double b.bin 20

for line in "0x10010000000e4004   # DPU_S_POINTER: ping-pong pointer and executer enabled" \
            "0x020100000120100c   # CNA_CONV_CON1: direct convolution, fp16 in, fp16 processing" \
            "0x0201000000b11040   # CNA_CBUF_CON0: one data bank, eleven weight banks" \
            "0x0201100000001070   # CNA_FEATURE_DATA_ADDR: the feature operand at 0x10000000" \
            "0x1001A80000024010   # DPU_DATA_FORMAT: fp16 in, fp32 out" \
            "0x0801000000003030   # CORE 0x3030, beyond the mainline register map" \
            "0x0201123456781ffc   # an offset the map does not know" \
            "0x0000000000000000   # a zero entry"; do
  printf '%-126s\n' "$line"
done > big.txt
double big.txt 16
