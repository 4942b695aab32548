#!/bin/sh
# program.sh DEVICE IMAGE OUT_FIFO IN_FIFO: a stand-in for a vendor's FPGA
# programming tool. Images: "fail" fails, "hang" never finishes, "gated"
# reports it started on OUT_FIFO and waits for a line on IN_FIFO; any other
# image succeeds at once. The last stdout line is the loaded function.
case "$2" in
  fail) echo "bitstream rejected by $1" >&2; exit 1 ;;
  hang) exec sleep 60 ;;
  gated) echo started > "$3"; read -r _ < "$4" ;;
esac
echo "$2"
