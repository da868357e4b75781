#!/bin/bash
# usage: sweep.sh ub fa ctx...   prints "ub fa 0 ctx <compute buffer MiB>" per context (see README.md)
ub=$1; fa=$2; shift 2
for ctx in $@; do
  ./probe dsv4flash-shape.gguf $ctx $ub $fa 1 > r_$$.log 2>&1
  c=$(grep "compute buffer size" r_$$.log | grep -o "[0-9.]* MiB" | head -1)
  echo "$ub $fa 0 $ctx $c"
done
rm -f r_$$.log
