//! Every resource limit in one place. Each one exists to keep hostile input from making kinspect
//! hang, recurse without bound or allocate without bound; tests named for what they prevent live
//! with the code that enforces them.

/// Deepest nesting of structs/arrays/record batches the decoder follows before reporting an error.
pub const MAX_DEPTH: usize = 64;

/// Largest Kafka frame accepted from a stream (size prefix). Kafka's own default
/// `socket.request.max.bytes` is 100 MiB; larger sizes are treated as a framing error / resync.
pub const MAX_FRAME_SIZE: u32 = 100 * 1024 * 1024;

/// Most bytes one compressed batch (or legacy wrapper message) may decompress to.
pub const MAX_DECOMPRESSED_BYTES: usize = 64 * 1024 * 1024;

/// Most bytes a compressed input file (gzip, zstd) may decompress to. It is streamed, so this
/// bounds time, not memory: a few megabytes of bomb cannot keep kinspect busy for an hour. A
/// larger capture can be decompressed beforehand.
pub const MAX_DECOMPRESSED_INPUT: u64 = 16 * 1024 * 1024 * 1024;

/// The largest LZ4 block (the frame format's block size code 7), and so the most the block buffer
/// each decoding thread keeps for LZ4 batches holds (`records::codec::lz4`).
pub const MAX_LZ4_BLOCK: usize = 4 * 1024 * 1024;

/// Most bytes all decompressed buffers of one decoded tree may hold together.
pub const MAX_DECOMPRESSED_PER_TREE: usize = 256 * 1024 * 1024;

/// Largest decompression ratio tolerated before a batch is reported as a decompression bomb
/// (applies once the output passes 1 MiB, so tiny highly-compressible batches are fine).
pub const MAX_DECOMPRESSION_RATIO: usize = 1024;

/// Most nodes one decoded tree may hold; past this the rest of the frame becomes an error node.
/// A record is about eleven nodes, so this is some 190,000 records in one frame (a 55 MB fetch,
/// Kafka's default `fetch.max.bytes`, of 290-byte records); 2 Mi nodes of 64 bytes are 128 MiB.
/// Twice that let a 600 KB capture of two lz4 batches of empty records cost 370 MiB and seven
/// seconds in the tree view (the hostile campaign's `bombs:6`).
pub const MAX_NODES_PER_TREE: usize = 2 * 1024 * 1024;

/// Most diagnostics one decoded tree (a frame, a log batch) keeps. Past it one
/// `diagnostics-suppressed` diagnostic counts the rest, so hostile bytes that are each wrong
/// (a batch decompressing to megabytes of zeros) cannot cost a diagnostic per byte.
pub const MAX_DIAGNOSTICS_PER_TREE: usize = 1024;

/// Most diagnostics one record set (a `records` field, a log batch) keeps, so that one bad record
/// set cannot use up [`MAX_DIAGNOSTICS_PER_TREE`] and hide the diagnostics of the others; the rest
/// are counted by one `diagnostics-suppressed` diagnostic of that record set.
pub const MAX_DIAGNOSTICS_PER_RECORD_SET: usize = 256;

/// Most bytes the `*` lines of one `hexdump -C` block may stand for (each repeats the row
/// before it up to the next offset): past this the dump is refused, so a few hundred bytes of
/// text cannot become a 100 MiB frame of zeros. A real frame with 16 MiB of identical rows is
/// better dumped with `hexdump -v`.
pub const MAX_HEX_REPEAT_BYTES: u64 = 16 * 1024 * 1024;

/// Most bytes buffered per TCP direction waiting for a missing segment before a gap is declared.
pub const MAX_REASSEMBLY_BUFFER: usize = 8 * 1024 * 1024;

/// The reassembly makes room for a whole frame at once (its size prefix says how large) once
/// it holds at least 1/`RESERVE_AHEAD` of the frame's bytes: what a connection's buffer
/// reserves is at most this many times what the capture brought of the frame.
pub const RESERVE_AHEAD: usize = 16;

/// Frame buffers the reassembly gathered, handed to the decoding thread and given back once
/// decoded, kept for the next large frames (`pdu::spare`): at most this many bytes of them.
/// A fresh buffer costs a page fault per 4 KiB the frame fills; kept, its pages stay mapped.
pub const SPARE_FRAME_BYTES: usize = 4 * 1024 * 1024;

/// Most TCP connections tracked at once; the oldest idle ones are flushed past this.
pub const MAX_CONNECTIONS: usize = 65_536;

/// Most bytes kept per TCP connection while it is not yet known which side is the Kafka client
/// (no SYN, no known broker port): enough for a request and its response; past it the direction
/// is decided from the evidence so far.
pub const MAX_DETECTION_BYTES: usize = 256 * 1024;

/// Most bytes kept for direction detection by all connections together.
pub const MAX_DETECTION_BYTES_TOTAL: usize = 32 * 1024 * 1024;

/// Most outstanding requests remembered per connection for correlation-id matching.
pub const MAX_OUTSTANDING_PER_CONN: usize = 4096;

/// Most records in a row that may fail to decode before the rest of their record set is left
/// undecoded as one error node. Each record's own length prefix lets decoding go on after a bad
/// record, so without this a batch decompressing to megabytes of `02 00` (a one-byte record,
/// truncated) became 700,000 error records and 170 MB of tree per batch (the hostile campaign's
/// `bombs:57`).
pub const MAX_MALFORMED_RECORDS_IN_A_ROW: usize = 32;

/// Most `not` and `(` a display filter (`-Y`) may nest: parsing, evaluating and dropping the
/// expression recurse on them (100,000 `!` overflowed the stack). `and`/`or` chains are flat
/// and cost nothing here.
pub const MAX_QUERY_DEPTH: usize = 256;

/// Largest spec file the schema loader reads.
pub const MAX_SPEC_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Most JSON values (objects, arrays, members' values, array items) one spec file may hold; past
/// it the rest of the file is not read (`file-too-large` at the value). Kafka's largest spec
/// (4.3.1's `StreamsGroupDescribeResponse.json`) has 298, so this is some 200 times that, while
/// 16 MiB of `0,` would otherwise be 5.6 million values, each a field model and diagnostics.
pub const MAX_SPEC_JSON_VALUES: usize = 65_536;

/// Most mistakes the spec reader steps over (pasted Unicode spaces, `#` comments) before it gives
/// up on the file.
pub const MAX_SPEC_RECOVERED: usize = 200;

/// Most diagnostics listed for one spec file; past it one `diagnostics-suppressed` diagnostic
/// counts the rest by severity. A 600 KB file whose `fields` held 77,000 numbers was 88,000
/// diagnostics and 366 MiB of report (the hostile campaign's `specs:1780`, seed 0x5eed1206).
pub const MAX_DIAGNOSTICS_PER_SPEC_FILE: usize = 1000;

/// Most diagnostics listed for one run of the spec validator, over all its files; past it one
/// `diagnostics-suppressed` diagnostic counts the rest. Ten files at the per-file cap; the JSON
/// report holds about 1.4 KB a diagnostic while it is written.
pub const MAX_DIAGNOSTICS_PER_SPEC_RUN: usize = 10_000;

/// Most work one baseline comparison does over all its specs (`validate-schema --baseline`), in
/// fields looked at plus cells of the field alignment, summed over the classes of versions
/// compared. Kafka 4.3.1 against 3.9.0 takes about 19 thousand units
/// (`validate_compat::kafkas_own_releases_compare_well_within_the_work_limit`); past the limit
/// a `compat-incomplete` warning names the versions not compared of the spec being compared, and
/// another the specs after it. Half a second of work on the machines measured.
pub const MAX_COMPAT_WORK: u64 = 1 << 26;

/// Most spec files one set of paths is read as (Kafka's 4.3.1 message folder holds 286); past
/// it the rest are not read (`too-many-files`).
pub const MAX_SPEC_FILES: usize = 10_000;

/// Most bytes of spec files one set of paths is read as (Kafka's 4.3.1 folder holds 0.9 MB):
/// the texts are held while they are checked, and their models for the checks across files and
/// against a baseline. Past it the rest are not read (`input-too-large`).
pub const MAX_SPEC_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Most connections whose conversation the checker (`check`) follows at once; past it new
/// connections are not checked (reported once, `check-state-capped`).
pub const MAX_CHECK_CONNECTIONS: usize = 16_384;

/// Most unanswered requests the checker remembers per connection (for correlation-id reuse and
/// to pair KRaft requests with their answers); past it the oldest is forgotten.
pub const MAX_CHECK_INFLIGHT_PER_CONN: usize = 512;

/// Most UNSUPPORTED_VERSION answers remembered per connection.
pub const MAX_CHECK_UNSUPPORTED_PER_CONN: usize = 16;

/// Most brokers whose advertised API versions the checker remembers.
pub const MAX_CHECK_BROKERS: usize = 4096;

/// Most (client, topic, partition) leader-epoch states the checker keeps.
pub const MAX_CHECK_PARTITIONS: usize = 262_144;

/// Most quorum replicas (controllers and observers) whose election state is inferred.
pub const MAX_CHECK_REPLICAS: usize = 1024;

/// Most (candidate, epoch) vote tallies kept.
pub const MAX_CHECK_ELECTIONS: usize = 16_384;

/// Most events the quorum timeline keeps; later ones are counted.
pub const MAX_CHECK_TIMELINE_EVENTS: usize = 10_000;

/// Most partitions whose KIP-704 leader-recovery state (from metadata records) the checker keeps.
pub const MAX_CHECK_RECOVERY_PARTITIONS: usize = 262_144;

/// Most brokers whose registration epoch the checker keeps.
pub const MAX_CHECK_BROKER_EPOCHS: usize = 65_536;

/// Most ISR members the checker reads from one record or AlterPartition partition (Kafka's
/// replica ids are bounded only by the array length).
pub const MAX_CHECK_ISR: usize = 256;

/// Most (producer id, topic, partition) sequence states the checker keeps.
pub const MAX_CHECK_PRODUCER_PARTITIONS: usize = 262_144;

/// Most findings `kinspect check` lists for one PDU; the rest are counted per rule in one
/// `check-findings-capped` finding (a Produce to thousands of partitions can break a rule for
/// each).
pub const MAX_CHECK_FINDINGS_PER_PDU: usize = 1024;

/// Most lines `records` and the Parquet tables keep to say on stderr (capture notes, log
/// findings, PDUs that did not decode); the rest are counted (`output::notes`).
pub const MAX_NOTES: usize = 1000;

/// Most producer ids (epochs, transactions) the checker keeps.
pub const MAX_CHECK_PRODUCERS: usize = 65_536;

/// Most partitions the checker remembers as added to one producer's transaction.
pub const MAX_CHECK_TXN_PARTITIONS: usize = 4096;

/// Most unanswered Produce requests whose batches the checker keeps to explain their answers.
pub const MAX_CHECK_PRODUCE_INFLIGHT: usize = 65_536;

/// Most (group, member) states the checker keeps.
pub const MAX_CHECK_GROUP_MEMBERS: usize = 65_536;

/// Most partitions the checker keeps of one member's assignment.
pub const MAX_CHECK_ASSIGNMENT: usize = 4096;

/// Time buckets of the HTML report's plots (`output::report`): a fixed count whose width
/// doubles as the capture's time span grows, so the timeline costs the same for a second or a
/// week of traffic.
pub const MAX_REPORT_TIME_BUCKETS: usize = 60;

/// Series (APIs, error codes) the report's timeline follows by name; the rest are counted
/// together as "other" (the API key and error code are wire data: 65,536 possible values each).
pub const MAX_REPORT_SERIES: usize = 64;

/// (API key, version) pairs `stats` and the report count one by one. PDUs of any other pair
/// (only hostile or damaged traffic names so many) are counted together, without latencies or
/// error codes, so that counts, latency histograms and error tallies stay bounded.
pub const MAX_STATS_APIS: usize = 4096;

/// Latencies of one API kept one by one, so that `stats` and the report give its percentiles
/// exactly; past this many they come from log-linear buckets (each value within 1/256 of its
/// bucket's midpoint). 32 KiB an API, and only for APIs the protocol knows (an unknown API key's
/// latencies go to buckets alone), so a few MiB at most.
pub const MAX_EXACT_LATENCIES: usize = 4096;

/// Slowest requests the report keeps with their decoded trees (a tree is rendered only while
/// its PDU is among them).
pub const MAX_REPORT_SLOWEST: usize = 100;

/// Most bytes of one rendered tree the report keeps (a Fetch response's tree can be megabytes).
pub const MAX_REPORT_TREE_BYTES: usize = 64 * 1024;

/// Connections and clients the report lists one by one; the rest are counted together.
pub const MAX_REPORT_CONNECTIONS: usize = 1_000;

/// Check findings the report lists one by one (every finding is counted per rule).
pub const MAX_REPORT_FINDINGS: usize = 500;

/// `--pairs`: most requests held (decoded) while they wait for a response that may match the
/// filter, and most bytes they may hold together. Past either the oldest is let go (its response
/// is then shown alone), and the run says so once with a `pairs-overflow` note.
pub const MAX_PAIRS_IN_FLIGHT: usize = 4096;
pub const MAX_PAIRS_BYTES: usize = 64 * 1024 * 1024;
