//! Tagged sections: the count, each tag and size, known tags decoded as members of their
//! struct, unknown ones kept raw; order, duplicates and declared sizes checked.

use super::{Seg, Slot, Step, Walker};
use crate::diag::Diagnostic;
use crate::wire::plan::{Plan, StructPlan};
use crate::wire::tree::{Kind, NodeId, Span, Value};

/// Name of an `Error` node that replaces a struct's whole tagged section.
pub const TAGS: &str = "_tagged_fields";

impl Walker<'_, '_> {
    pub(super) fn tagged_section(
        &mut self,
        plan: &Plan,
        sp: &StructPlan,
        pos: usize,
        limit: usize,
    ) -> Step {
        // Most sections are empty: a count of 0 in one byte.
        if pos < limit && self.data.get(pos) == Some(&0) {
            let id = self
                .tree
                .open("", Kind::TaggedSection, self.buf, pos as u32);
            self.tree.node_mut(id).hdr = 1;
            self.tree.close(id, pos as u32 + 1);
            return Ok(pos + 1);
        }
        self.path.push(Seg::Name(TAGS));
        let r = self.tagged_inner(plan, sp, pos, limit);
        self.path.pop();
        r
    }

    fn tagged_inner(&mut self, plan: &Plan, sp: &StructPlan, pos: usize, limit: usize) -> Step {
        let (count, hdr) = self.uvarint(TAGS, pos, pos, limit, "a tagged-field count (uvarint)")?;
        let mut p = pos + hdr;
        // Each tagged field takes at least two bytes (tag and size).
        if count as u64 * 2 > limit.saturating_sub(p) as u64 {
            let rem = limit.saturating_sub(p);
            return Err(self.fail(
                TAGS,
                pos,
                limit,
                "count-exceeds-remaining",
                pos,
                format!("{count} tagged fields claimed but only {rem} bytes remain"),
            ));
        }
        let id = self
            .tree
            .open("", Kind::TaggedSection, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        let mut prev: Option<u32> = None;
        for _ in 0..count {
            match self.tagged_field(plan, sp, p, limit, &mut prev) {
                Ok(q) => p = q,
                Err(a) => {
                    // A tag or size that cannot be read loses the section's framing: the error
                    // replaces the whole section (count included) so the bytes stay together.
                    let err = self.tree.nodes.last().copied();
                    self.tree.nodes.truncate(id as usize);
                    if let Some(mut n) = err {
                        n.name = TAGS;
                        n.offset = pos as u32;
                        n.len = limit.saturating_sub(pos) as u32;
                        n.end = id + 1;
                        self.tree.nodes.push(n);
                    }
                    return Err(a);
                }
            }
        }
        self.tree.close(id, p as u32);
        Ok(p)
    }

    fn tagged_field(
        &mut self,
        plan: &Plan,
        sp: &StructPlan,
        p: usize,
        limit: usize,
        prev: &mut Option<u32>,
    ) -> Step {
        let (tag, tl) = self.uvarint("", p, p, limit, "a tag (uvarint)")?;
        let (size, sl) = self.uvarint("", p, p + tl, limit, "a tagged-field size (uvarint)")?;
        let q = p + tl + sl;
        let size = size as usize;
        if size > limit.saturating_sub(q) {
            let rem = limit.saturating_sub(q);
            return Err(self.fail(
                "",
                p,
                limit,
                "truncated",
                p,
                format!("tag {tag} declares {size} bytes, only {rem} left"),
            ));
        }
        let fend = q + size;
        match *prev {
            Some(t) if t == tag => self.err("tag-duplicate", p, format!("tag {tag} appears twice")),
            Some(t) if t > tag => self.err(
                "tag-order",
                p,
                format!("tag {tag} after tag {t} (tags must ascend)"),
            ),
            _ => {}
        }
        *prev = Some(tag);
        let Some(f) = sp.tagged_field(tag) else {
            let id = self.tree.leaf(
                "",
                Value::Bytes(Span {
                    start: q as u32,
                    len: size as u32,
                }),
                self.buf,
                p as u32,
                (fend - p) as u32,
            );
            let n = self.tree.node_mut(id);
            n.kind = Kind::UnknownTag;
            n.hdr = (q - p) as u16;
            return Ok(fend);
        };
        // Known tags read as members of the struct (as the JSON shows them), so their paths
        // leave out the section.
        let section = self.path.pop();
        self.path.push(Seg::Name(f.name));
        let first = self.tree.nodes.len();
        let slot = Slot {
            name: f.name,
            nullable: f.nullable,
            compact: true,
            in_tag: true,
            entity: f.entity,
        };
        let r = self.value(plan, &f.ty, slot, q, fend);
        if let Ok(e) = r {
            if e != fend {
                let msg = format!(
                    "tag {tag} ({}) declares {size} bytes but its content takes {}",
                    f.name,
                    e - q
                );
                let d = Diagnostic::error("tag-size-mismatch", self.path_string(), p as u64, msg)
                    .in_buf(self.buf);
                if self
                    .tree
                    .nodes
                    .get(first)
                    .is_some_and(|n| n.kind == Kind::Scalar)
                {
                    // A leaf simply grows to the declared size (below); its value span is exact.
                    self.tree.diags.push(d);
                } else {
                    self.tree
                        .error_node("_excess", self.buf, e as u32, (fend - e) as u32, d);
                }
            }
        }
        self.path.pop();
        self.path.extend(section);
        // The field node spans its tag and size too; its header grows accordingly.
        let end_id = self.tree.nodes.len() as NodeId;
        if let Some(n) = self.tree.nodes.get_mut(first) {
            n.hdr = n.hdr.saturating_add((q - p) as u16);
            n.offset = p as u32;
            n.len = (fend - p) as u32;
            if n.kind != Kind::Scalar && n.kind != Kind::Error {
                n.end = end_id;
            }
        }
        Ok(fend)
    }
}
