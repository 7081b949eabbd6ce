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
mk exit2-api-without-version 'decode --api Metadata input.hex'; echo "$F11" > exit2-api-without-version/input.hex
mk exit2-bad-format 'decode --format yaml input.hex'; echo "$F4" > exit2-bad-format/input.hex

# encode
mk encode-hex 'encode --format hex input.jsonl'
mk encode-annotated 'encode --format hex input.jsonl'

# diagnostics: real frames with named bytes changed (see each README)
TXN38=$(payload mock-confluent-txn.pcap 38)          # InitProducerId v4 request
T6=$(payload tansu-kcat-apiversions-fail.pcap 6)     # ApiVersions v3 response (tansu), 4 tagged fields
F6=$(payload mock-kcat-none.pcap 6)                  # ApiVersions v3 response (mock), malformed as sent
# edit HEX OFFSET OLD NEW: replace the bytes OLD at byte OFFSET by NEW (checked), fix nothing else
edit() { python3 - "$@" <<'PY'
import sys
h, off, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
b = bytes.fromhex(h)
o = bytes.fromhex(old)
assert b[off:off+len(o)] == o, (b[off:off+len(o)].hex(), old)
print((b[:off] + bytes.fromhex(new) + b[off+len(o):]).hex())
PY
}
dg() { mk "diag-$1" "decode --format jsonl $2 input.hex"; echo "$3" > "diag-$1/input.hex"; }
dg truncated '' "$(echo "$F4" | cut -c1-60)"
dg negative-length '' "$(edit "$F12" 25 0005 fffe)"
dg null-not-allowed '' "$(edit "$F12" 25 0005 ffff)"
dg count-exceeds-remaining '' "$(edit "$F10" 21 00000000 7fffffff)"
dg invalid-utf8 '' "$(edit "$F12" 29 64 ff)"
dg invalid-bool '--api ApiVersions --api-version 3 --response' "$(edit "$T6" 279 00 02)"
dg varint-overlong '' "$(edit "$(edit "$F4" 22 0b 8b00)" 0 00000024 00000025)"
dg varint-overflow '' "$(edit "$F4" 22 0b ffffffffff01)"
dg tag-order '--api ApiVersions --api-version 3 --response' "$(edit "$T6" 274 020101030100 030100020101)"
dg tag-duplicate '--api ApiVersions --api-version 3 --response' "$(edit "$T6" 277 030100 020101)"
dg tag-size-mismatch '--api ApiVersions --api-version 3 --response' "$(edit "$(edit "$T6" 261 000101 00020100)" 0 00000114 00000115)"
dg unknown-api '' "$(edit "$F8" 4 0012 7fff)"
dg unknown-version '' "$(edit "$F4" 6 0003 0063)"
dg unstable-version '' "$(edit "$(edit "$(edit "$TXN38" 44 00 000000)" 6 0004 0006)" 0 00000029 0000002b)"
dg trailing-bytes '--api ApiVersions --api-version 3 --response' "$F6"
dg size-mismatch '' "$(edit "$F8" 0 00000011 00000010)"
dg missing-hints '--response' "$F11"
dg apiversions-fallback '--api ApiVersions --api-version 3 --response' "$F9"

# log segment: the records of mock-kcat-none frame 23 (Produce v7, topic "codec", partition 1),
# bytes 52..2705: int32 length 2653 at 48, then the batches, written as a segment file
P23=$(payload mock-kcat-none.pcap 23)
mkdir -p log-segment/codec-1
python3 - "$P23" log-segment/codec-1/00000000000000000000.log <<'PY'
import sys
b = bytes.fromhex(sys.argv[1])
assert int.from_bytes(b[48:52], 'big') == 2653 and len(b) == 2705
open(sys.argv[2], 'wb').write(b[52:])
PY
mk log-segment 'decode --format jsonl codec-1/00000000000000000000.log'

# stdin and several inputs
mk stdin-hex 'decode --format summary -'; { echo "$F8"; echo; echo "$F12"; } > stdin-hex/stdin
mk multi-file 'decode --format jsonl a.hex b.bin'; echo "$F8" > multi-file/a.hex; bin "$F12" > multi-file/b.bin

# a damaged capture: every packet cut to 128 bytes (capture notes in the summary)
mk pcap-notes 'decode --format summary ../../../captures/mock-kcat-snaplen128.pcap'
mk pcap-stream-filter 'decode --format summary --stream 1 ../../../captures/mock-kcat-none.pcap'

# string-too-long: frame 4 with ClientSoftwareName (compact string, byte 22) made 32768 'x'
# (compact length 32769 = uvarint 81 80 02); the size prefix fixed to match
mkdir -p diag-string-too-long
python3 - "$F4" diag-string-too-long/input.bin <<'PY'
import sys
b = bytes.fromhex(sys.argv[1])
assert b[22] == 0x0b and b[23:33] == b"librdkafka"
body = b[4:22] + bytes([0x81, 0x80, 0x02]) + b"x" * 32768 + b[33:]
open(sys.argv[2], "wb").write(len(body).to_bytes(4, "big") + body)
PY
mk diag-string-too-long 'decode --format summary input.bin'

# a gzip batch (records in a decompressed buffer): mock-kcat-gzip frame 14 (Produce v7, codec/1),
# Records at 48: int32 length 195, then one batch
G14=$(payload mock-kcat-gzip.pcap 14)
mkdir -p log-segment-gzip/codec-1
python3 - "$G14" log-segment-gzip/codec-1/00000000000000000000.log <<'PY'
import sys
b = bytes.fromhex(sys.argv[1])
assert int.from_bytes(b[48:52], 'big') == 195 and len(b) == 247
open(sys.argv[2], 'wb').write(b[52:])
PY
mk log-segment-gzip 'decode --format tree codec-1/00000000000000000000.log'

# a whole capture as tshark -x text (every packet, reassembled sections included)
mk hex-tshark-x-capture 'decode --format summary input.hex'
tshark -r "$CAP/tansu-kcat-apiversions-fail.pcap" -x 2>/dev/null > hex-tshark-x-capture/input.hex
