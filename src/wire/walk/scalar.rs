//! Primitive values and length-prefixed ones (string, bytes, records): the leaves of the tree.

use super::{Abort, Slot, Step, Walker};
use crate::schema::model::Prim;
use crate::wire::cursor::Cursor;
use crate::wire::tree::{Span, Value};

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

    pub(super) fn prim(&mut self, p: Prim, s: Slot, pos: usize, limit: usize) -> Step {
        let mut c = Cursor::new(self.data, pos, limit);
        let fixed = match p {
            Prim::Bool => c.u8().map(|b| {
                if b > 1 {
                    self.warn(
                        "invalid-bool",
                        pos,
                        format!("bool byte {b:#04x} (expected 0 or 1), read as true"),
                    );
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
            self.tree.leaf_with(
                name,
                Value::Null,
                self.buf,
                pos as u32,
                hdr as u32,
                hdr as u16,
                s.entity,
            );
            return Ok(start);
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
        self.tree.leaf_with(
            name,
            value,
            self.buf,
            pos as u32,
            (hdr + len) as u32,
            hdr as u16,
            s.entity,
        );
        Ok(start + len)
    }
}
