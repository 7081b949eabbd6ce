//! Primitive values and length-prefixed ones (string, bytes, records): the leaves of the tree.

use super::{Abort, Seg, Slot, Step, Walker};
use crate::limits::MAX_NODES_PER_TREE;
use crate::schema::model::{Entity, Prim};
use crate::wire::cursor::Cursor;
use crate::wire::plan::FieldPlan;
use crate::wire::tree::{Span, Value};

/// The value of fixed-width primitive `p` in `b` (exactly its width), as [`Cursor`] reads it.
#[inline]
fn fixed_value(p: Prim, b: &[u8]) -> Option<Value> {
    Some(match p {
        Prim::Bool => Value::Bool(*b.first()? != 0),
        Prim::Int8 => Value::Int(i64::from(*b.first()? as i8)),
        Prim::Int16 => Value::Int(i64::from(i16::from_be_bytes(b.try_into().ok()?))),
        Prim::Uint16 => Value::Int(i64::from(u16::from_be_bytes(b.try_into().ok()?))),
        Prim::Int32 => Value::Int(i64::from(i32::from_be_bytes(b.try_into().ok()?))),
        Prim::Uint32 => Value::Int(i64::from(u32::from_be_bytes(b.try_into().ok()?))),
        Prim::Int64 => Value::Int(i64::from_be_bytes(b.try_into().ok()?)),
        Prim::Float64 => Value::Float(f64::from_be_bytes(b.try_into().ok()?)),
        Prim::Uuid => Value::Uuid(b.try_into().ok()?),
        Prim::String | Prim::Bytes | Prim::Records => return None,
    })
}

impl Walker<'_, '_> {
    /// Reads a length or count prefix: `(value, prefix bytes)`, -1 meaning null.
    pub(super) fn length(
        &mut self,
        name: &'static str,
        compact: bool,
        wide: bool,
        pos: usize,
        limit: usize,
        what: &str,
    ) -> Result<(i64, usize), Abort> {
        if compact {
            let (raw, len) = self.uvarint(name, pos, pos, limit, what)?;
            // Kafka computes `readUnsignedVarint() - 1` on a Java int.
            return Ok((i64::from(raw as i32) - 1, len));
        }
        let mut c = Cursor::new(self.data, pos, limit);
        let r = if wide {
            c.i32().map(i64::from)
        } else {
            c.i16().map(i64::from)
        };
        match r {
            Ok(n) => Ok((n, if wide { 4 } else { 2 })),
            Err(e) => Err(self.read_fail(name, pos, limit, pos, what, e)),
        }
    }

    /// The leaf of a string or bytes (or its null) at `pos`: an `hdr`-byte length prefix, then
    /// `len` bytes. Returns where the next value starts.
    #[inline]
    fn blob_leaf(
        &mut self,
        name: &'static str,
        value: Value,
        entity: Entity,
        pos: usize,
        (hdr, len): (usize, usize),
    ) -> usize {
        self.tree.leaf_with(
            name,
            value,
            self.buf,
            pos as u32,
            (hdr + len) as u32,
            hdr as u16,
            entity,
        );
        pos + hdr + len
    }

    fn bool_warn(&mut self, b: u8, pos: usize) {
        self.warn(
            "invalid-bool",
            pos,
            format!("bool byte {b:#04x} (expected 0 or 1), read as true"),
        );
    }

    /// The shortcut for a run of fixed-width untagged fields (`run`, `width` bytes together) at
    /// `pos`: when they all fit and the node budget has room for one node each, they are read
    /// with one bounds check. Returns how many fields were read and where they end (0: none, the
    /// general path reads the first).
    pub(super) fn fixed_run(
        &mut self,
        run: &[FieldPlan],
        width: usize,
        pos: usize,
        limit: usize,
    ) -> (usize, usize) {
        let end = pos.saturating_add(width);
        let bytes = match self.data.get(pos..end) {
            Some(b) if end <= limit && self.tree.nodes.len() + run.len() <= MAX_NODES_PER_TREE => b,
            _ => return (0, pos),
        };
        let mut off = 0;
        for (i, f) in run.iter().enumerate() {
            let Some((p, w)) = f.fixed() else {
                return (i, pos + off);
            };
            let at = pos + off;
            let Some(v) = bytes.get(off..off + w).and_then(|b| fixed_value(p, b)) else {
                return (i, at);
            };
            if let (Prim::Bool, Some(&b)) = (p, bytes.get(off)) {
                if b > 1 {
                    self.name_last(Seg::Name(f.name));
                    self.bool_warn(b, at);
                }
            }
            self.tree
                .leaf_with(f.name, v, self.buf, at as u32, w as u32, 0, f.entity);
            off += w;
            if f.entity != Entity::None {
                self.note_topic(f);
            }
        }
        (run.len(), pos + off)
    }

    /// The shortcut for `n` elements of fixed-width primitive `p` (`w` bytes each) at `pos`:
    /// when they all fit and the node budget has room, all of them with one bounds check.
    /// Returns how many were read (0: none, the general path reads them) and where they end.
    pub(super) fn fixed_elements(
        &mut self,
        p: Prim,
        w: usize,
        entity: Entity,
        n: u32,
        pos: usize,
        limit: usize,
    ) -> (u32, usize) {
        let end = pos.saturating_add(w.saturating_mul(n as usize));
        let bytes = match self.data.get(pos..end) {
            Some(b) if end <= limit && self.tree.nodes.len() + n as usize <= MAX_NODES_PER_TREE => {
                b
            }
            _ => return (0, pos),
        };
        for (i, b) in bytes.chunks_exact(w).enumerate() {
            let at = pos + i * w;
            let Some(v) = fixed_value(p, b) else {
                return (i as u32, at);
            };
            if let (Prim::Bool, Some(&b)) = (p, b.first()) {
                if b > 1 {
                    self.name_last(Seg::Index(i as u32));
                    self.bool_warn(b, at);
                }
            }
            self.tree
                .leaf_with("", v, self.buf, at as u32, w as u32, 0, entity);
        }
        (n, end)
    }

    /// The shortcut for a string or bytes at `pos` whose length prefix is a non-negative one
    /// (an int16 or int32, or a one-byte uvarint) or an allowed null, whose content fits and is
    /// valid UTF-8 for a string: a leaf, and where it ends. `None` (nothing was read) for
    /// anything else, which the general path reads and reports.
    pub(super) fn fast_blob(
        &mut self,
        p: Prim,
        s: Slot,
        pos: usize,
        limit: usize,
    ) -> Option<usize> {
        if self.tree.nodes.len() >= MAX_NODES_PER_TREE {
            return None;
        }
        let data = self.data.get(..limit)?;
        let (n, hdr) = if s.compact {
            let b = *data.get(pos)?;
            if b >= 0x80 {
                return None;
            }
            (i64::from(b) - 1, 1)
        } else if p == Prim::String {
            let b = data.get(pos..pos + 2)?;
            (i64::from(i16::from_be_bytes(b.try_into().ok()?)), 2)
        } else {
            let b = data.get(pos..pos + 4)?;
            (i64::from(i32::from_be_bytes(b.try_into().ok()?)), 4)
        };
        let start = pos + hdr;
        if n < 0 {
            if n != -1 || !s.nullable {
                return None;
            }
            return Some(self.blob_leaf(s.name, Value::Null, s.entity, pos, (hdr, 0)));
        }
        let len = n as usize;
        let bytes = data.get(start..start.checked_add(len)?)?;
        let span = Span {
            start: start as u32,
            len: len as u32,
        };
        let value = match p {
            Prim::String => {
                if len > i16::MAX as usize
                    || !(bytes.is_ascii() || std::str::from_utf8(bytes).is_ok())
                {
                    return None;
                }
                Value::Str(span)
            }
            Prim::Bytes => Value::Bytes(span),
            _ => return None,
        };
        Some(self.blob_leaf(s.name, value, s.entity, pos, (hdr, len)))
    }

    pub(super) fn prim(&mut self, p: Prim, s: Slot, pos: usize, limit: usize) -> Step {
        let mut c = Cursor::new(self.data, pos, limit);
        let fixed = match p {
            Prim::Bool => c.u8().map(|b| {
                if b > 1 {
                    self.bool_warn(b, pos);
                }
                Value::Bool(b != 0)
            }),
            Prim::Int8 => c.i8().map(|v| Value::Int(v.into())),
            Prim::Int16 => c.i16().map(|v| Value::Int(v.into())),
            Prim::Uint16 => c.u16().map(|v| Value::Int(v.into())),
            Prim::Int32 => c.i32().map(|v| Value::Int(v.into())),
            Prim::Uint32 => c.u32().map(|v| Value::Int(v.into())),
            Prim::Int64 => c.i64().map(Value::Int),
            Prim::Float64 => c.f64().map(Value::Float),
            Prim::Uuid => c.uuid().map(Value::Uuid),
            Prim::String | Prim::Bytes | Prim::Records => return self.blob(p, s, pos, limit),
        };
        match fixed {
            Ok(v) => {
                let len = (c.pos() - pos) as u32;
                self.tree
                    .leaf_with(s.name, v, self.buf, pos as u32, len, 0, s.entity);
                Ok(c.pos())
            }
            Err(e) => Err(self.read_fail(s.name, pos, limit, pos, p.as_str(), e)),
        }
    }

    /// string / bytes / records: a length prefix then that many bytes.
    fn blob(&mut self, p: Prim, s: Slot, pos: usize, limit: usize) -> Step {
        let name = s.name;
        let what = if s.compact {
            "a compact length (uvarint)"
        } else if p == Prim::String {
            "a length (int16)"
        } else {
            "a length (int32)"
        };
        let (n, hdr) = self.length(name, s.compact, p != Prim::String, pos, limit, what)?;
        let start = pos + hdr;
        if n == -1 {
            if !s.nullable {
                self.err(
                    "null-not-allowed",
                    pos,
                    format!("null {} where this version does not allow null", p.as_str()),
                );
            }
            return Ok(self.blob_leaf(name, Value::Null, s.entity, pos, (hdr, 0)));
        }
        if n < -1 {
            return Err(self.fail(
                name,
                pos,
                limit,
                "negative-length",
                pos,
                format!("{} length {n} (only -1 means null)", p.as_str()),
            ));
        }
        let len = n as usize;
        if len > limit.saturating_sub(start) {
            return Err(self.fail(
                name,
                pos,
                limit,
                "truncated",
                start,
                format!(
                    "{} of {len} bytes at byte {start}, only {} left",
                    p.as_str(),
                    limit.saturating_sub(start)
                ),
            ));
        }
        let span = Span {
            start: start as u32,
            len: len as u32,
        };
        if p == Prim::Records {
            if let Some((hook, opts)) = self.records {
                return Ok(self.batches(hook, opts, name, pos, hdr, span));
            }
        }
        let value = match p {
            Prim::String => {
                if len > i16::MAX as usize {
                    self.err(
                        "string-too-long",
                        pos,
                        format!("string of {len} bytes; Kafka refuses more than 32767"),
                    );
                }
                let bytes = self.data.get(start..start + len).unwrap_or(&[]);
                if let Err(e) = std::str::from_utf8(bytes) {
                    let at = start + e.valid_up_to();
                    self.warn(
                        "invalid-utf8",
                        at,
                        format!("invalid UTF-8 at byte {at} of a string (shown with U+FFFD)"),
                    );
                }
                Value::Str(span)
            }
            _ => Value::Bytes(span),
        };
        Ok(self.blob_leaf(name, value, s.entity, pos, (hdr, len)))
    }
}
