#!/bin/sh
# Regenerates the golden cases' inputs from the bundled captures (provenance; needs tshark, xxd,
# hexdump, python3). Each case's README says which frame it holds and what was checked by hand.
# Mutated frames (diagnostic cases) are real frames with the bytes named in the README changed.
set -eu
cd "$(dirname "$0")"
CAP=../../captures
payload() { # capture frame -> hex of the TCP payload
  tshark -r "$CAP/$1" -Y "frame.number==$2" -T fields -e tcp.payload 2>/dev/null
}
bin() { python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$1"; }
mk() { mkdir -p "$1"; printf '%s\n' "$2" > "$1/cmd"; }

F4=$(payload mock-kcat-none.pcap 4)      # ApiVersions v3 request (40 bytes)
F8=$(payload mock-kcat-none.pcap 8)      # ApiVersions v0 request
F9=$(payload mock-kcat-none.pcap 9)      # ApiVersions v0 response
F10=$(payload mock-kcat-none.pcap 10)    # Metadata v2 request, all topics
F11=$(payload mock-kcat-none.pcap 11)    # Metadata v2 response
F12=$(payload mock-kcat-none.pcap 12)    # Metadata v2 request, topic "codec"

# hex styles: one frame, every style
mk hex-stream 'decode --format jsonl input.hex';        echo "$F4" > hex-stream/input.hex
mk hex-xxd 'decode --format jsonl input.hex';           bin "$F4" | xxd > hex-xxd/input.hex
mk hex-xxd-plain 'decode --format jsonl input.hex';     bin "$F4" | xxd -p > hex-xxd-plain/input.hex
mk hex-xxd-g1 'decode --format jsonl input.hex';        bin "$F4" | xxd -g1 > hex-xxd-g1/input.hex
mk hex-hexdump-c 'decode --format jsonl input.hex';     bin "$F4" | hexdump -C > hex-hexdump-c/input.hex
mk hex-spaced 'decode --format jsonl input.hex';        echo "$F4" | sed 's/../& /g; s/ $//' | fold -w 48 > hex-spaced/input.hex
mk hex-offsets 'decode --format jsonl input.hex';       bin "$F4" | xxd -g1 -c16 | sed 's/^0000//; s/  .*$//' > hex-offsets/input.hex
mk hex-tshark-x 'decode --format jsonl input.hex';      tshark -r "$CAP/mock-kcat-none.pcap" -Y 'frame.number>=4 && frame.number<=6' -x 2>/dev/null > hex-tshark-x/input.hex
mk hex-no-prefix 'decode --format jsonl input.hex';     echo "$F4" | cut -c9- > hex-no-prefix/input.hex
mk hex-two-blocks 'decode --format summary input.hex';  { echo "$F8"; echo; echo "$F10"; } > hex-two-blocks/input.hex
mk hex-concatenated 'decode --format summary input.hex'; echo "$F8$F10$F12" > hex-concatenated/input.hex

# raw frames
mk raw-frame 'decode --format jsonl input.bin';         bin "$F4" > raw-frame/input.bin
mk raw-concatenated 'decode --format summary input.bin'; bin "$F8$F10$F12" > raw-concatenated/input.bin

# output formats
mk format-tree 'decode --format tree --api Metadata --api-version 2 --response input.hex'; echo "$F11" > format-tree/input.hex
mk format-json 'decode --format json input.hex';        { echo "$F8"; echo; echo "$F12"; } > format-json/input.hex
mk format-annotate 'decode --format jsonl --annotate input.hex'; echo "$F12" > format-annotate/input.hex
mk format-summary 'decode --format summary ../../../captures/tansu-kcat-apiversions-fail.pcap'
mk format-color 'decode --color always --format tree input.hex'; echo "$F8" > format-color/input.hex
mk response-hints 'decode --format jsonl --api ApiVersions --api-version 0 --response input.hex'; echo "$F9" > response-hints/input.hex
mk pcap-jsonl 'decode --format jsonl ../../../captures/tansu-kcat-apiversions-fail.pcap'
mk pcap-api-filter 'decode --format summary --api-filter metadata,0 ../../../captures/mock-kcat-none.pcap'
mk pcap-errors-only 'decode --format summary --errors-only ../../../captures/mock-kcat-none.pcap'

# exit codes
mk exit2-missing-file 'decode no-such-file.pcap'
mk exit2-bad-hex 'decode input.hex'; printf '00 00 00 11 00 12 00 00\n00 00 00 02 00 07 72 6g\n' > exit2-bad-hex/input.hex
mk exit2-unknown-api 'decode --api Metadat --api-version 2 --response input.hex'; echo "$F11" > exit2-unknown-api/input.hex
mk exit2-response-without-api 'decode --response input.hex'; echo "$F11" > exit2-response-without-api/input.hex

# encode
mk encode-hex 'encode --output hex input.jsonl'
mk encode-annotated 'encode --output hex input.jsonl'
