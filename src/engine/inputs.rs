//! Each input to frames: open it, tell its kind from its first bytes (or take the forced one),
//! and read it as a capture, a hex dump, raw frames or a Kafka log file.
//!
//! Every input is read through one `Box<dyn Read>` chain (`open` → progress count → detection
//! head), so a wrapping reader (a decompressor) goes in one place: [`Driver::input`].

use super::{Driver, Input, Progress, Route};
use crate::capture::{read_capture_to, CaptureSink, Event};
use crate::input::hex::HexReader;
use crate::input::packets::{link_type, PcapFromHex};
use crate::input::raw::RawReader;
use crate::input::{classify, split_prefixed, InputKind, DETECT_BYTES};
use crate::pdu::{Direction, FrameBuf, Hints, Origin};
use crate::protocol::Protocol;
use crate::records::file::{decode_log_file, decode_quorum_state, FileKind};
use crate::records::RecordsContext;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

impl<R: Route> Driver<'_, R> {
    /// Reads one input to the end (or until the output stops).
    pub(super) fn input(&mut self, input: Input<'_>, name: String) {
        let (reader, size): (Box<dyn Read + '_>, Option<u64>) = match input {
            // A partition folder (`orders-0/`): its segments, indexes checked (engine/logdir.rs).
            Input::Path(p) if p.is_dir() => return self.log_dir(&p, name),
            Input::Path(p) => match std::fs::File::open(&p) {
                Ok(f) => {
                    let size = f.metadata().ok().map(|m| m.len());
                    (Box::new(f), size)
                }
                Err(e) => return self.end_input(name, None, None, Some(e.to_string())),
            },
            Input::Stdin => (Box::new(io::stdin().lock()), None),
            Input::Reader { reader, size, .. } => (reader, size),
            Input::Bytes { bytes, .. } => (Box::new(bytes), Some(bytes.len() as u64)),
        };
        let reader: Box<dyn Read + '_> = match &self.opts.progress {
            Some(p) => {
                p.start(&name, size);
                Box::new(Counting {
                    r: reader,
                    done: 0,
                    progress: Arc::clone(p),
                })
            }
            None => reader,
        };
        let (kind, summary, failed) = match self.read(reader, &name) {
            Ok((kind, summary)) => (Some(kind), summary, None),
            Err((kind, msg)) => (kind, None, Some(msg)),
        };
        if let Some(p) = &self.opts.progress {
            p.end();
        }
        self.end_input(name, kind, summary, failed);
    }

    /// Detects the kind and reads. `Err` says why the input could not be read (with its place).
    #[allow(clippy::type_complexity)]
    fn read(
        &mut self,
        reader: Box<dyn Read + '_>,
        name: &str,
    ) -> Result<(InputKind, Option<crate::capture::CaptureSummary>), (Option<InputKind>, String)>
    {
        // gzip and zstd captures (and dumps) are read as they are decompressed, as tshark does.
        let (_, mut reader) = crate::input::open(reader).map_err(|e| (None, e.to_string()))?;
        let mut head = Vec::with_capacity(DETECT_BYTES);
        (&mut reader)
            .take(DETECT_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| (None, e.to_string()))?;
        // Text that is no input we read (a README, a broker log) is refused, not decoded as a
        // frame, unless the kind is forced.
        let kind = match self.opts.kind {
            Some(k) => k,
            None => classify(Some(name), &head).map_err(|e| (None, e.to_string()))?,
        };
        let empty = head.is_empty();
        // Taken as a capture (`stats`, `--input pcap`) but recognisably something else: said
        // when the capture reader refuses it.
        let looks_like = match (kind, self.opts.kind) {
            (InputKind::Pcap, Some(_)) => classify(Some(name), &head)
                .ok()
                .filter(|k| matches!(k, InputKind::Log | InputKind::Hex)),
            _ => None,
        };
        let reader = io::Cursor::new(head).chain(reader);
        let info = super::InputInfo { name, kind };
        let begun = self.route.begin_input(&info);
        self.wrote(begun);
        let r = match kind {
            // An empty input holds nothing whatever it was said to be (`stats` and `check` take
            // every input as a capture): it is reported as empty, as every other command reports
            // it, not as a capture without its header.
            InputKind::Pcap if empty => Ok(None),
            InputKind::Pcap => self.capture(reader).map_err(|e| match looks_like {
                Some(k) => format!(
                    "{e} (it looks like {}: `kinspect decode` and `kinspect records` read it \
                     when its kind is left to detection)",
                    kind_name(k)
                ),
                None => e,
            }),
            InputKind::Hex => self.hex(BufReader::with_capacity(1 << 16, reader)),
            InputKind::Raw => self
                .raw(BufReader::with_capacity(1 << 16, reader))
                .map(|_| None),
            InputKind::Log => self.log(reader, name).map(|_| None),
        };
        r.map(|s| (kind, s)).map_err(|e| (Some(kind), e))
    }

    /// A log segment, snapshot or quorum-state file: one tree per batch (or corrupt region),
    /// `stream_offset` = the batch's file offset. The topic, which decides how internal-topic
    /// records are read, comes from `--as` or the `TOPIC-PARTITION` folder name.
    fn log<Rd: Read>(&mut self, reader: Rd, name: &str) -> Result<(), String> {
        let path = std::path::Path::new(name);
        let kind = FileKind::of_path(path).unwrap_or(FileKind::Segment);
        let topic = path
            .parent()
            .and_then(crate::records::logdir::topic_of_folder);
        let ctx = RecordsContext {
            topic: topic.as_deref(),
            partial_tail_ok: true,
            as_type: self.opts.records.as_type,
            ..Default::default()
        };
        let mut index = 0u64;
        if kind == FileKind::QuorumState {
            let mut t = decode_quorum_state(reader).map_err(|e| e.to_string())?;
            self.tree(
                Origin {
                    index,
                    ..Origin::default()
                },
                &mut t,
            );
            return Ok(());
        }
        decode_log_file(reader, kind, &ctx, &mut |at, t| {
            self.tree(
                Origin {
                    index,
                    stream_offset: Some(at),
                    ..Origin::default()
                },
                t,
            );
            index += 1;
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    fn capture<Rd: Read>(
        &mut self,
        reader: Rd,
    ) -> Result<Option<crate::capture::CaptureSummary>, String> {
        let mut copts = self.opts.capture.clone();
        copts.protocol = Some(self.opts.protocol);
        read_capture_to(reader, &copts, &mut Feed(self))
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn hex<Rd: BufRead>(
        &mut self,
        reader: Rd,
    ) -> Result<Option<crate::capture::CaptureSummary>, String> {
        let mut hex = HexReader::new(reader);
        let mut index = 0u64;
        let mut first = true;
        while let Some(block) = hex.next_block().map_err(|e| e.to_string())? {
            if first {
                first = false;
                if let Some(link) = link_type(&block.data) {
                    // Whole packets (tshark -x): let the capture reader reassemble them.
                    let pcap = PcapFromHex::new(hex, &block.data, link);
                    self.no_clock = true;
                    let r = self.capture(pcap);
                    self.no_clock = false;
                    return r;
                }
            }
            let pieces = if self.opts.no_size_prefix {
                None
            } else {
                split_prefixed(&block.data).filter(|p| p.len() > 1)
            };
            match pieces {
                Some(ranges) => {
                    for r in ranges {
                        let h = Hints {
                            has_size_prefix: Some(true),
                            ..self.opts.hints
                        };
                        let origin = Origin {
                            index,
                            ..Origin::default()
                        };
                        self.frame(origin, h, &block.data[r]);
                        index += 1;
                    }
                }
                None => {
                    let origin = Origin {
                        index,
                        ..Origin::default()
                    };
                    self.frame(origin, self.opts.hints, &block.data[..]);
                    index += 1;
                }
            }
            if self.stopped {
                break;
            }
        }
        Ok(None)
    }

    fn raw<Rd: Read>(&mut self, reader: Rd) -> Result<(), String> {
        let mut raw = RawReader::new(reader, self.opts.no_size_prefix);
        let mut index = 0u64;
        while let Some(f) = raw.next_frame().map_err(|e| e.to_string())? {
            let origin = Origin {
                index,
                stream_offset: Some(f.offset),
                ..Origin::default()
            };
            let h = Hints {
                has_size_prefix: f.has_size_prefix.or(self.opts.hints.has_size_prefix),
                ..self.opts.hints
            };
            self.frame(origin, h, &f.data[..]);
            index += 1;
            if self.stopped {
                break;
            }
        }
        Ok(())
    }
}

/// Whether a frame on its own (hex, raw) starts with its size prefix, when its bytes say so
/// although the prefix disagrees with the length (a frame cut short, or a damaged prefix):
/// the first four bytes are a sane size and, read as a request header instead, would name no
/// known API version. `None` leaves it to the decoder (prefix iff it matches the length).
pub(crate) fn guess_size_prefix(proto: &Protocol, data: &[u8], hints: &Hints) -> Option<bool> {
    let head = data.get(..4)?;
    let size = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if size as i64 == data.len() as i64 - 4 {
        return Some(true);
    }
    if hints.direction == Some(Direction::Response)
        || !(0..=crate::limits::MAX_FRAME_SIZE as i32).contains(&size)
    {
        return None;
    }
    let key = i16::from_be_bytes([head[0], head[1]]);
    let version = i16::from_be_bytes([head[2], head[3]]);
    proto
        .message(key, version, Direction::Request)
        .is_none()
        .then_some(true)
}

/// Counts the bytes read for a [`Progress`].
struct Counting<R> {
    r: R,
    done: u64,
    progress: Arc<dyn Progress>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.r.read(buf)?;
        self.done += n as u64;
        self.progress.read(self.done);
        Ok(n)
    }
}

/// The capture reader's events into the driver; the first packet's time starts the sink's
/// clock (summary times are relative to the capture's first packet, as tshark's are, not to
/// its first Kafka frame).
pub(super) struct Feed<'d, 'o, R: Route>(pub(super) &'d mut Driver<'o, R>);

impl<R: Route> CaptureSink for Feed<'_, '_, R> {
    fn event(&mut self, ev: Event<'_>) {
        self.0.event(ev)
    }

    fn frame(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        self.0.captured_frame(origin, hints, data)
    }

    fn first_packet(&mut self, ts_ns: i64) {
        if !self.0.no_clock {
            self.0.clock(Some(ts_ns));
        }
    }
}

/// An input kind in a sentence: "a pcap or pcapng capture".
pub(super) fn kind_name(k: InputKind) -> &'static str {
    match k {
        InputKind::Hex => "a hex dump",
        InputKind::Raw => "raw frames",
        InputKind::Pcap => "a pcap or pcapng capture",
        InputKind::Log => "a Kafka log file",
    }
}
