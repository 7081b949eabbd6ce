//! What the table and record sinks say beside their output, on standard error: capture notes,
//! log findings and PDUs whose decoding failed. Their output (one line or one JSON object per
//! record, Parquet rows) has no place for them, and an exit code of 1 with nothing said would
//! leave the user guessing.

use crate::diag::{Diagnostic, Severity};
use crate::limits::MAX_NOTES;
use crate::pdu::{Origin, Pdu};
use std::fmt::Write as _;

/// Notes met while reading, as `INPUT frame N: severity [code] what` lines (`INPUT:OFFSET: …`
/// in a file), each with where it was met (input, then frame or offset) so that the lines of
/// two threads come out in order. On two threads each half keeps its own ([`Notes::half`]),
/// merged by [`Notes::merge`].
#[derive(Debug, Default)]
pub struct Notes {
    kept: Vec<((u32, u64), String)>,
    dropped: u64,
    /// A line for each PDU with an error diagnostic (else they are only counted).
    pdu_lines: bool,
    /// PDUs with an error diagnostic.
    pub pdus_with_errors: u64,
    /// The input being read, and how many were begun.
    input: String,
    input_seq: u32,
}

impl Notes {
    /// `pdu_lines`: a line for each PDU with an error diagnostic, for a sink whose output does
    /// not show them (records); else they are counted.
    pub fn new(pdu_lines: bool) -> Notes {
        Notes {
            pdu_lines,
            ..Notes::default()
        }
    }

    /// Whether each PDU with an error diagnostic has a line (else it is only counted).
    pub fn lines_for_pdus(&self) -> bool {
        self.pdu_lines
    }

    /// An empty set for the worker's half, of the input being read.
    pub fn half(&self) -> Notes {
        let mut n = Notes::new(self.pdu_lines);
        n.sync(self);
        n
    }

    /// Brings a half to the input this side is reading, before its batch.
    pub fn sync(&mut self, from: &Notes) {
        self.input.clone_from(&from.input);
        self.input_seq = from.input_seq;
    }

    pub fn begin_input(&mut self, name: &str) {
        name.clone_into(&mut self.input);
        self.input_seq += 1;
    }

    /// A capture note or log finding. A client closing with a request in flight, or a capture
    /// stopped mid-conversation (`unanswered` at info), says nothing about records or rows and
    /// is not kept; a server closing on a request is a warning and is.
    pub fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) {
        if d.code == crate::capture::UNANSWERED && d.severity == Severity::Info {
            return;
        }
        self.keep(origin, d, input, |l| l.push_str(&d.message));
    }

    /// A PDU: its first error diagnostic, where it is, and how many more it has.
    pub fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) {
        let mut errors = pdu
            .tree
            .diags
            .iter()
            .filter(|d| d.severity == Severity::Error);
        let Some(first) = errors.next() else {
            return;
        };
        self.pdus_with_errors += 1;
        if !self.pdu_lines {
            return;
        }
        let more = errors.count();
        self.keep(&pdu.origin, first, input, |what| {
            if let (Some(api), Some(dir)) = (pdu.api_name, pdu.direction) {
                what.push_str(api);
                if let Some(v) = pdu.api_version {
                    let _ = write!(what, " v{v}");
                }
                what.push(' ');
                what.push_str(dir.as_str());
                what.push_str(if first.path.is_empty() { ": " } else { " " });
            }
            if !first.path.is_empty() {
                let _ = write!(what, "at {}: ", first.path);
            }
            what.push_str(&first.message);
            if more > 0 {
                let s = if more == 1 { "" } else { "s" };
                let _ = write!(what, " (and {more} more error{s})");
            }
        });
    }

    /// Keeps `INPUT frame N: severity [code] what`, unless [`MAX_NOTES`] are kept already (then
    /// counts it, and `what` is never written).
    fn keep(
        &mut self,
        origin: &Origin,
        d: &Diagnostic,
        input: Option<&str>,
        what: impl FnOnce(&mut String),
    ) {
        if self.kept.len() >= MAX_NOTES {
            self.dropped += 1;
            return;
        }
        let mut line = String::from(input.unwrap_or(&self.input));
        let _ = match (origin.frame, origin.stream_offset) {
            (Some(f), _) => write!(line, " frame {f}"),
            (None, Some(o)) => write!(line, ":{o}"),
            _ => Ok(()),
        };
        let _ = write!(line, ": {} [{}] ", d.severity.as_str(), d.code);
        what(&mut line);
        let key = (
            self.input_seq,
            origin.frame.or(origin.stream_offset).unwrap_or(0),
        );
        self.kept.push((key, line));
    }

    /// Takes in what a half kept.
    pub fn merge(&mut self, half: &mut Notes) {
        for n in half.kept.drain(..) {
            if self.kept.len() < MAX_NOTES {
                self.kept.push(n);
            } else {
                self.dropped += 1;
            }
        }
        self.dropped += std::mem::take(&mut half.dropped);
        self.pdus_with_errors += std::mem::take(&mut half.pdus_with_errors);
    }

    /// The lines kept, in input and frame order, and how many more there were.
    pub fn take(&mut self) -> (Vec<String>, u64) {
        let mut kept = std::mem::take(&mut self.kept);
        kept.sort_by_key(|(at, _)| *at);
        let lines = kept.into_iter().map(|(_, n)| n).collect();
        (lines, std::mem::take(&mut self.dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Direction::{Request, Response};
    use crate::schema::model::Prim;

    /// Which messages a PDU with errors may have lost records from (`HoldsRecords`): those with
    /// a `records` field in their version, at any depth; the protocol's own specs say which.
    #[test]
    fn messages_with_a_records_field() {
        let p = crate::protocol::builtin();
        let has = |key: i16, v: i16, d| {
            p.message(key, v, d)
                .unwrap()
                .spec
                .has_prim(Prim::Records, v)
        };
        // Produce request and Fetch response in their first and last versions of 4.3.1.
        assert!(has(0, 3, Request) && has(0, 13, Request));
        assert!(has(1, 4, Response) && has(1, 18, Response));
        // ShareFetch response (KIP-932).
        assert!(has(78, 1, Response));
        // Their other halves and a message with no records.
        assert!(!has(0, 13, Response) && !has(1, 18, Request) && !has(3, 12, Request));
    }

    /// A user's overlay may define a common struct that holds itself: the walk stops at
    /// `limits::MAX_DEPTH` instead of overflowing the stack, and still finds a `records` field
    /// beside the loop.
    #[test]
    fn a_struct_that_holds_itself_is_walked_to_the_depth_limit() {
        use crate::schema::model::{Field, FieldType, MessageSpec, Pos, StructSpec};
        use crate::schema::versions::Versions;
        let field = |name: &str, ty: FieldType| Field {
            name: name.into(),
            ty,
            versions: Versions::ALL,
            ..Field::default()
        };
        let looped = field("Next", FieldType::Struct("Loop".into()));
        let mut spec = MessageSpec {
            fields: vec![looped.clone()],
            common_structs: vec![StructSpec {
                name: "Loop".into(),
                versions: Versions::ALL,
                fields: vec![looped],
                pos: Pos::default(),
                deprecated_versions: Versions::NONE,
                props: Vec::new(),
            }],
            ..MessageSpec::default()
        };
        assert!(!spec.has_prim(Prim::Records, 0));
        spec.fields
            .push(field("Records", FieldType::Prim(Prim::Records)));
        assert!(spec.has_prim(Prim::Records, 0));
    }

    /// Lines come out in input and frame order whichever thread kept them, and the cap holds.
    #[test]
    fn merged_in_order_and_capped() {
        let note = |frame| {
            (
                Origin {
                    frame: Some(frame),
                    ..Origin::default()
                },
                Diagnostic::new(Severity::Warning, "frame-incomplete", "", 0, "cut"),
            )
        };
        let mut main = Notes::new(true);
        main.begin_input("a.pcap");
        let mut half = main.half();
        let (o, d) = note(9);
        main.note(&o, &d, None);
        let (o, d) = note(4);
        half.note(&o, &d, None);
        main.merge(&mut half);
        main.begin_input("b.pcap");
        let (o, d) = note(1);
        main.note(&o, &d, None);
        let (lines, dropped) = main.take();
        assert_eq!(
            lines,
            [
                "a.pcap frame 4: warning [frame-incomplete] cut",
                "a.pcap frame 9: warning [frame-incomplete] cut",
                "b.pcap frame 1: warning [frame-incomplete] cut",
            ]
        );
        assert_eq!(dropped, 0);
        for f in 0..MAX_NOTES as u64 + 5 {
            let (o, d) = note(f);
            main.note(&o, &d, None);
        }
        let (lines, dropped) = main.take();
        assert_eq!((lines.len(), dropped), (MAX_NOTES, 5));
    }
}
