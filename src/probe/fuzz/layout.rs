//! Where each field of an encoded request lies: the decoder's annotated tree of the frame
//! (every node has its offset, length and prefix size) walked alongside the compiled plan of the
//! request at its version (which says what each node is: its primitive type, whether it is
//! nullable, compact, tagged). The mutators aim at these slots.

use crate::pdu::{Direction, Hints, Pdu};
use crate::protocol::Protocol;
use crate::schema::model::Prim;
use crate::wire::decode::Decoder;
use crate::wire::plan::{shared, Plan, Ty};
use crate::wire::tree::{Kind, NodeId, Tree, Value};

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// A fixed-width scalar (ints, bool, float64, uuid).
    Fixed(Prim),
    /// A string (length prefix, then UTF-8).
    Str,
    /// A `bytes` field.
    Bytes,
    /// A `records` field (its prefix is the length of the record data).
    Records,
    Array,
    Struct,
    /// A tagged-field section: uvarint count, then the tags.
    Section,
    /// One tag of a section (known or not): uvarint tag, uvarint size, payload.
    Tag,
    /// Record batch v2 parts, by the names the records decoder gives them.
    Batch,
    BatchLength,
    BatchCrc,
    BatchAttributes,
}

/// One field (or part) of the frame, offsets from the frame's first byte (size prefix
/// included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: &'static str,
    pub what: What,
    pub offset: usize,
    pub len: usize,
    /// Bytes of the slot's own prefix (length/count, tag and size header, null marker).
    pub hdr: usize,
    /// The schema allows null here (at this version).
    pub nullable: bool,
    /// Lengths and counts are compact uvarints.
    pub compact: bool,
    /// The value is null on the wire.
    pub null: bool,
    pub in_header: bool,
    /// Inside a tagged field (whose size covers it) or a record batch (whose length and CRC
    /// cover it): a mutator that changes the slot's width leaves those stale.
    pub covered: bool,
}

/// A request frame's layout: every slot in pre-order (header first), plus where the header's
/// version field is.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub slots: Vec<Slot>,
    /// The decoder found errors in the frame (a kinspect encoder bug, or a hostile value the
    /// encoder wrote but that cannot be read back): mutators still work on what decoded.
    pub had_errors: bool,
}

impl Layout {
    /// Decodes `frame` (a request with its size prefix) and maps its nodes to the plan.
    pub fn of(
        proto: &'static Protocol,
        decoder: &mut Decoder,
        frame: &[u8],
        api_key: i16,
        version: i16,
    ) -> Layout {
        let hints = Hints {
            direction: Some(Direction::Request),
            has_size_prefix: Some(true),
            ..Hints::default()
        };
        let mut pdu = Pdu::default();
        decoder.decode_frame(frame, &hints, &mut pdu);
        let mut out = Layout {
            slots: Vec::new(),
            had_errors: pdu.tree.has_errors(),
        };
        let t = &pdu.tree;
        let Some(root) = (!t.nodes.is_empty()).then_some(0) else {
            return out;
        };
        if let Some(h) = t.child(root, "header") {
            header(t, h, &mut out.slots);
        }
        let spec = proto
            .message(api_key, version, Direction::Request)
            .map(|r| r.spec);
        if let (Some(b), Some(spec)) = (t.child(root, "body"), spec) {
            let plan = shared(spec, version);
            let mut w = Walk {
                t,
                plan: &plan,
                out: &mut out.slots,
            };
            w.structure(plan.root, b, false);
        }
        out
    }

    pub fn find(&self, what: What) -> impl Iterator<Item = &Slot> {
        self.slots.iter().filter(move |s| s.what == what)
    }
}

fn slot(t: &Tree, id: NodeId, what: What, in_header: bool, covered: bool) -> Slot {
    let n = t.node(id);
    Slot {
        name: n.name,
        what,
        offset: n.offset as usize,
        len: n.len as usize,
        hdr: n.hdr as usize,
        nullable: false,
        compact: false,
        null: n.value == Value::Null,
        in_header,
        covered,
    }
}

fn header(t: &Tree, h: NodeId, out: &mut Vec<Slot>) {
    for c in t.children(h) {
        let n = t.node(c);
        if n.buf != 0 {
            continue;
        }
        match n.kind {
            Kind::Scalar if n.name == "ClientId" => {
                let mut s = slot(t, c, What::Str, true, false);
                // The header's ClientId is a nullable int16-prefixed string in every version.
                s.nullable = true;
                out.push(s);
            }
            Kind::Scalar => out.push(slot(t, c, What::Fixed(Prim::Int32), true, false)),
            Kind::TaggedSection => {
                let mut s = slot(t, c, What::Section, true, false);
                s.compact = true;
                out.push(s);
            }
            _ => {}
        }
    }
}

struct Walk<'a> {
    t: &'a Tree,
    plan: &'a Plan,
    out: &'a mut Vec<Slot>,
}

impl Walk<'_> {
    fn structure(&mut self, sid: u32, node: NodeId, covered: bool) {
        let sp = self.plan.structure(sid);
        for c in self.t.children(node) {
            let n = self.t.node(c);
            if n.buf != 0 {
                continue;
            }
            match n.kind {
                Kind::TaggedSection => {
                    let mut s = slot(self.t, c, What::Section, false, covered);
                    s.compact = true;
                    self.out.push(s);
                    for tc in self.t.children(c) {
                        let tn = self.t.node(tc);
                        let mut ts = slot(self.t, tc, What::Tag, false, covered);
                        ts.compact = true;
                        ts.name = tn.name;
                        match tn.kind {
                            Kind::UnknownTag => self.out.push(ts),
                            Kind::Error => {}
                            _ => {
                                self.out.push(ts);
                                if let Some(f) = sp.tagged.iter().find(|f| f.name == tn.name) {
                                    self.value(&f.ty, f.nullable, true, tc, true, true);
                                }
                            }
                        }
                    }
                }
                Kind::Error => {}
                _ => {
                    if let Some(f) = sp.fields.iter().find(|f| f.name == n.name) {
                        self.value(&f.ty, f.nullable, f.compact, c, covered, false);
                    }
                }
            }
        }
    }

    /// `tag_header`: the node's prefix starts with a tag and size (a known tagged field): its
    /// own slot was pushed as a `Tag`; the value's slot is not pushed again.
    fn value(
        &mut self,
        ty: &Ty,
        nullable: bool,
        compact: bool,
        id: NodeId,
        covered: bool,
        tag_header: bool,
    ) {
        let n = *self.t.node(id);
        let what = match ty {
            Ty::Prim(Prim::String) => What::Str,
            Ty::Prim(Prim::Bytes) => What::Bytes,
            Ty::Prim(Prim::Records) => What::Records,
            Ty::Prim(p) => What::Fixed(*p),
            Ty::Array(_) => What::Array,
            Ty::Struct(_) => What::Struct,
            Ty::TooDeep => return,
        };
        if !tag_header {
            let mut s = slot(self.t, id, what, false, covered);
            s.nullable = nullable;
            s.compact = compact;
            self.out.push(s);
        }
        if n.value == Value::Null {
            return;
        }
        match ty {
            Ty::Array(inner) => {
                for e in self.t.children(id) {
                    self.value(inner, false, compact, e, covered, false);
                }
            }
            Ty::Struct(sid) if n.kind == Kind::Struct => self.structure(*sid, id, covered),
            Ty::Prim(Prim::Records) => self.batches(id),
            _ => {}
        }
    }

    fn batches(&mut self, records: NodeId) {
        for b in self.t.children(records) {
            let bn = self.t.node(b);
            if bn.buf != 0 || bn.kind != Kind::Struct {
                continue;
            }
            self.out.push(slot(self.t, b, What::Batch, false, true));
            for c in self.t.children(b) {
                let what = match self.t.node(c).name {
                    "BatchLength" => What::BatchLength,
                    "Crc" => What::BatchCrc,
                    "Attributes" => What::BatchAttributes,
                    _ => continue,
                };
                self.out.push(slot(self.t, c, what, false, true));
            }
        }
    }
}
