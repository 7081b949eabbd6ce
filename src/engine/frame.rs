//! One frame on its own: bytes and hints in, an owned [`Pdu`] out, with accessors that find
//! fields by path (`body.Topics[0].Name`) and give their values, offsets and lengths.

use crate::diag::Diagnostic;
use crate::pdu::{Hints, Pdu};
use crate::protocol::Protocol;
use crate::wire::tree::{Kind, NodeId, Value};

/// Decodes one Kafka frame (with or without its 4-byte size prefix) with the built-in protocol.
/// A response needs its request's API and version in `hints`; a request needs nothing.
pub fn decode_frame(bytes: &[u8], hints: &Hints) -> Pdu {
    decode_frame_in(crate::protocol::builtin(), bytes, hints)
}

/// [`decode_frame`] with a protocol of one's own (`protocol::load(Some(dir))`).
pub fn decode_frame_in(proto: &'static Protocol, bytes: &[u8], hints: &Hints) -> Pdu {
    let mut h = *hints;
    if h.has_size_prefix.is_none() {
        h.has_size_prefix = super::inputs::guess_size_prefix(proto, bytes, &h);
    }
    let mut pdu = Pdu::default();
    crate::records::decoder(proto).decode_frame(bytes, &h, &mut pdu);
    pdu
}

/// A field's value, borrowed from its PDU.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue<'a> {
    Null,
    Bool(bool),
    /// Every integer type, int8 to int64 and varints.
    Int(i64),
    Float(f64),
    /// A uuid's 16 bytes.
    Uuid([u8; 16]),
    /// A string (lossy when it is not valid UTF-8: the decoder has said so in a diagnostic).
    Str(std::borrow::Cow<'a, str>),
    /// Bytes (`bytes` fields, records kept raw).
    Bytes(&'a [u8]),
    /// A named constant the decoder gave (a record batch's codec, a marker).
    Label(&'static str),
    /// A struct: its members are fields too.
    Struct,
    /// An array of so many elements (`name[i]` reaches each).
    Array(usize),
    /// What the decoder could not read (see the diagnostics).
    Error,
}

/// A field of a decoded PDU: where it is and what it holds.
#[derive(Clone, Copy, Debug)]
pub struct FieldRef<'a> {
    pdu: &'a Pdu,
    id: NodeId,
}

impl<'a> FieldRef<'a> {
    /// Its name in the schema ("" for an array element).
    pub fn name(&self) -> &'static str {
        self.pdu.tree.node(self.id).name
    }

    /// Byte offset in its buffer (the frame, or a decompressed records buffer: [`Self::buffer`]).
    pub fn offset(&self) -> u32 {
        self.pdu.tree.node(self.id).offset
    }

    /// Bytes it spans.
    pub fn len(&self) -> u32 {
        self.pdu.tree.node(self.id).len
    }

    /// Whether it spans no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// 0 for the frame, else a decompressed buffer.
    pub fn buffer(&self) -> u16 {
        self.pdu.tree.node(self.id).buf
    }

    pub fn value(&self) -> FieldValue<'a> {
        let t = &self.pdu.tree;
        let n = t.node(self.id);
        match n.kind {
            Kind::Struct | Kind::TaggedSection => return FieldValue::Struct,
            Kind::Array => return FieldValue::Array(t.children(self.id).count()),
            Kind::Error => return FieldValue::Error,
            _ => {}
        }
        match n.value {
            Value::Null => FieldValue::Null,
            Value::Bool(b) => FieldValue::Bool(b),
            Value::Int(v) => FieldValue::Int(v),
            Value::Float(f) => FieldValue::Float(f),
            Value::Uuid(u) => FieldValue::Uuid(u),
            Value::Str(s) => FieldValue::Str(String::from_utf8_lossy(t.bytes(n.buf, s))),
            Value::Bytes(s) | Value::Data(s) => FieldValue::Bytes(t.bytes(n.buf, s)),
            Value::Label(l) => FieldValue::Label(l),
            Value::None | Value::Diag(_) => FieldValue::Struct,
        }
    }

    /// The value as an integer, when it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self.value() {
            FieldValue::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value as a string, when it is one.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        match self.value() {
            FieldValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A member (of a struct) by name, or an element (of an array) by index.
    pub fn get(&self, step: &str) -> Option<FieldRef<'a>> {
        let t = &self.pdu.tree;
        let id = match step.parse::<usize>() {
            Ok(i) if t.node(self.id).kind == Kind::Array => t.children(self.id).nth(i)?,
            // Known tagged fields are members too.
            _ => t.child(self.id, step).or_else(|| {
                t.children(self.id)
                    .filter(|&c| t.node(c).kind == Kind::TaggedSection)
                    .find_map(|s| t.child(s, step))
            })?,
        };
        Some(FieldRef { pdu: self.pdu, id })
    }

    /// Members or elements, in order.
    pub fn children(&self) -> impl Iterator<Item = FieldRef<'a>> + 'a {
        let pdu = self.pdu;
        pdu.tree
            .children(self.id)
            .map(move |id| FieldRef { pdu, id })
    }
}

impl Pdu {
    /// The root of the decoded tree (`header` and `body` are its members), when anything was
    /// decoded.
    pub fn root(&self) -> Option<FieldRef<'_>> {
        (!self.tree.nodes.is_empty()).then_some(FieldRef { pdu: self, id: 0 })
    }

    /// A field by path from the root: names separated by dots, array elements by `[i]`
    /// (`body.Topics[0].Partitions[1].PartitionIndex`, `header.CorrelationId`).
    pub fn field(&self, path: &str) -> Option<FieldRef<'_>> {
        let mut at = self.root()?;
        for part in path.split('.').filter(|p| !p.is_empty()) {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !name.is_empty() {
                at = at.get(name)?;
            }
            while let Some(r) = rest.strip_prefix('[') {
                let (idx, after) = r.split_once(']')?;
                idx.parse::<usize>().ok()?;
                at = at.get(idx)?;
                rest = after;
            }
        }
        Some(at)
    }

    /// Everything the decoder (and the session, in a capture) found wrong or notable.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.tree.diags
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.tree.has_errors()
    }
}
