//! A partition folder as one input: its segments in offset order, one tree per batch (the sink
//! hears each segment's path as the input's name), and the index checks of
//! [`crate::records::logdir`] as notes placed at the index entry (`stream_offset` = its byte
//! offset in the index file; the message names the file).

use super::{Driver, InputInfo, Route};
use crate::input::InputKind;
use crate::pdu::Origin;
use crate::records::file::{decode_log_file, FileKind};
use crate::records::logdir::{batch_span, segments, IndexCheck};
use crate::records::RecordsContext;
use std::path::Path;
use std::sync::Arc;

impl<R: Route> Driver<'_, R> {
    pub(super) fn log_dir(&mut self, dir: &Path, name: String) {
        let folder = match segments(dir) {
            Ok(f) => f,
            Err(e) => return self.end_input(name, None, None, Some(e.to_string())),
        };
        if folder.segments.is_empty() {
            let mut why = String::from(
                "no Kafka log segment in this folder (a segment is named by its base offset in 20 digits: 00000000000000000000.log)",
            );
            if folder.other_logs.count > 0 {
                why += &format!(
                    "; its .log files are not segments ({})",
                    folder.other_logs.list("")
                );
            }
            if folder.captures.count > 0 {
                why += &format!(
                    "; it holds captures, give them by name ({})",
                    folder.captures.list("")
                );
            }
            if folder.partitions.count > 0 {
                why += &format!(
                    "; it holds folders named as partitions, give one of them ({})",
                    folder.partitions.list("/")
                );
            } else if folder.captures.count == 0 {
                why += "; give a partition folder such as orders-0/, or a file by name";
            }
            return self.end_input(name, None, None, Some(why));
        }
        // Segments where the command reads captures only (`stats`), or where `--input` said
        // another kind.
        if let Some(k) = self.opts.kind.filter(|&k| k != InputKind::Log) {
            let n = folder.segments.len();
            let why = format!(
                "a partition folder ({n} log segment{}), not {} (`kinspect decode` and \
                 `kinspect records` read it when its kind is left to detection)",
                if n == 1 { "" } else { "s" },
                super::inputs::kind_name(k)
            );
            return self.end_input(name, None, None, Some(why));
        }
        let segs = folder.segments;
        let info = InputInfo {
            name: &name,
            kind: InputKind::Log,
        };
        let begun = self.route.begin_input(&info);
        self.wrote(begun);
        let topic = crate::records::logdir::topic_of_folder(dir);
        let ctx = RecordsContext {
            topic: topic.as_deref(),
            partial_tail_ok: true,
            as_type: self.opts.records.as_type,
            ..Default::default()
        };
        if folder.other_logs.count > 0 {
            let d = crate::diag::Diagnostic::warning(
                "not-a-segment",
                "folder",
                0,
                format!(
                    "not read: {} (a segment is named by its base offset in 20 digits; give a file by name to read it)",
                    folder.other_logs.list("")
                ),
            );
            // Named by the folder, as index notes are by their index file.
            let saved = self.input_name.replace(Arc::from(name.as_str()));
            self.note(&Origin::default(), &d);
            self.input_name = saved;
        }
        let outer = self.input_name.take();
        let mut failed = None;
        let mut index = 0u64;
        for seg in segs {
            if self.stopped {
                break;
            }
            self.input_name = Some(Arc::from(seg.to_string_lossy().as_ref()));
            let mut diags = Vec::new();
            let mut check = IndexCheck::open(&seg, &mut diags);
            self.index_notes(&seg, &mut diags);
            let file = match std::fs::File::open(&seg) {
                Ok(f) => std::io::BufReader::with_capacity(256 << 10, f),
                Err(e) => {
                    failed = Some(format!("{}: {e}", seg.display()));
                    break;
                }
            };
            let r = decode_log_file(file, FileKind::Segment, &ctx, &mut |at, t| {
                if let Some(b) = batch_span(at, t) {
                    check.batch(&b, &mut diags);
                }
                self.tree(
                    Origin {
                        index,
                        stream_offset: Some(at),
                        ..Origin::default()
                    },
                    t,
                );
                index += 1;
                self.index_notes(&seg, &mut diags);
            });
            match r {
                Ok(sum) => {
                    check.finish(sum.bytes, &mut diags);
                    self.index_notes(&seg, &mut diags);
                }
                Err(e) => {
                    failed = Some(format!("{}: {e}", seg.display()));
                    break;
                }
            }
        }
        self.input_name = outer;
        self.end_input(name, Some(InputKind::Log), None, failed);
    }

    /// Index findings, each named by its index file (the note's `stream_offset` is the entry's
    /// byte offset there), after what was shown before.
    fn index_notes(&mut self, seg: &Path, diags: &mut Vec<crate::diag::Diagnostic>) {
        if diags.is_empty() {
            return;
        }
        let saved = self.input_name.take();
        for d in diags.drain(..) {
            let ext = if d.code.starts_with("timeindex") {
                "timeindex"
            } else {
                "index"
            };
            self.input_name = Some(Arc::from(
                seg.with_extension(ext).to_string_lossy().as_ref(),
            ));
            let origin = Origin {
                stream_offset: Some(d.offset),
                ..Origin::default()
            };
            self.note(&origin, &d);
        }
        self.input_name = saved;
    }
}
