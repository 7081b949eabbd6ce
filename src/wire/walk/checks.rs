//! The walker's field paths, diagnostics and limits: how a problem is reported (a diagnostic
//! with the field's path, or an `Error` node ending the region) and the depth and node budgets
//! every container and value is checked against.

use super::{Abort, Seg, Walker};
use crate::diag::Diagnostic;
use crate::diag::FieldPath;
use crate::limits::{MAX_DEPTH, MAX_NODES_PER_TREE};
use crate::wire::cursor::{Cursor, ReadError, VarintForm};
use std::fmt;

impl Walker<'_, '_> {
    pub(super) fn path_string(&self) -> String {
        self.shown_path().to_string()
    }

    /// The field path as it stands, to be put into words only if a diagnostic needs it.
    pub(super) fn shown_path(&self) -> WalkPath<'_> {
        WalkPath {
            prefix: self.prefix,
            segs: self.path,
        }
    }

    fn diag(&mut self, d: Diagnostic) {
        self.tree.diags.push(d.in_buf(self.buf));
    }

    pub(super) fn warn(&mut self, code: &'static str, offset: usize, msg: String) {
        let d = Diagnostic::warning(code, self.path_string(), offset as u64, msg);
        self.diag(d);
    }

    pub(super) fn err(&mut self, code: &'static str, offset: usize, msg: String) {
        let d = Diagnostic::error(code, self.path_string(), offset as u64, msg);
        self.diag(d);
    }

    /// Ends the current region: an `Error` node from `from` to `limit`.
    pub(super) fn fail(
        &mut self,
        name: &'static str,
        from: usize,
        limit: usize,
        code: &'static str,
        at: usize,
        msg: String,
    ) -> Abort {
        let d = Diagnostic::error(code, self.path_string(), at as u64, msg).in_buf(self.buf);
        self.tree.error_node(
            name,
            self.buf,
            from as u32,
            limit.saturating_sub(from) as u32,
            d,
        );
        Abort
    }

    pub(super) fn read_fail(
        &mut self,
        name: &'static str,
        from: usize,
        limit: usize,
        at: usize,
        what: &str,
        e: ReadError,
    ) -> Abort {
        match e {
            ReadError::Truncated { need, have } => self.fail(
                name,
                from,
                limit,
                "truncated",
                at,
                format!("expected {what} ({need} bytes) at byte {at}, only {have} left"),
            ),
            ReadError::VarintTooLong { max_bytes } => self.fail(
                name,
                from,
                limit,
                "varint-overflow",
                at,
                format!("{what}: varint longer than {max_bytes} bytes"),
            ),
        }
    }

    fn check_varint(&mut self, form: VarintForm, at: usize, what: &str) {
        if form.overlong {
            self.warn(
                "varint-overlong",
                at,
                format!("{what}: non-minimal {}-byte varint", form.len),
            );
        }
        if form.dropped_bits {
            self.warn(
                "varint-overflow",
                at,
                format!("{what}: bits above 2^32 set in the 5th varint byte (dropped)"),
            );
        }
    }

    /// Reads an unsigned varint at `at`, diagnosing non-minimal and overflowing forms; a varint
    /// that cannot be read ends the region (an `Error` node `name` from `from`).
    pub(super) fn uvarint(
        &mut self,
        name: &'static str,
        from: usize,
        at: usize,
        limit: usize,
        what: &str,
    ) -> Result<(u32, usize), Abort> {
        let mut c = Cursor::new(self.data, at, limit);
        match c.uvarint() {
            Ok((v, form)) => {
                self.check_varint(form, at, what);
                Ok((v, form.len as usize))
            }
            Err(e) => Err(self.read_fail(name, from, limit, at, what, e)),
        }
    }

    /// The node budget (`limits::MAX_NODES_PER_TREE`), checked before every value: each is at
    /// least one node, so a 100 MB array of int8 cannot become 100 M nodes. Inlined into every
    /// reader (one compare); the failure is out of line.
    #[inline(always)]
    pub(super) fn node_budget(
        &mut self,
        name: &'static str,
        pos: usize,
        limit: usize,
    ) -> Result<(), Abort> {
        if self.tree.nodes.len() >= MAX_NODES_PER_TREE {
            return Err(self.limit_hit(name, pos, limit, "node-limit", || {
                format!("more than {MAX_NODES_PER_TREE} nodes")
            }));
        }
        Ok(())
    }

    /// Guards every container's nesting (`limits::MAX_DEPTH`); inlined as
    /// [`Walker::node_budget`] is.
    #[inline(always)]
    pub(super) fn enter(
        &mut self,
        name: &'static str,
        pos: usize,
        limit: usize,
    ) -> Result<(), Abort> {
        if self.depth >= MAX_DEPTH {
            return Err(self.limit_hit(name, pos, limit, "depth-limit", || {
                format!("nesting deeper than {MAX_DEPTH}")
            }));
        }
        Ok(())
    }

    /// The error of a cap hit at `pos` (`node-limit`, `depth-limit`), with its message.
    #[cold]
    #[inline(never)]
    fn limit_hit(
        &mut self,
        name: &'static str,
        pos: usize,
        limit: usize,
        code: &'static str,
        what: fn() -> String,
    ) -> Abort {
        self.fail(name, pos, limit, code, pos, what())
    }
}

/// The walker's field path: its prefix (`body`, or the record a nested message is in), then
/// `.Name` and `[i]` segments (no dot before the first name when the prefix is empty).
pub(crate) struct WalkPath<'a> {
    pub prefix: FieldPath<'a>,
    pub segs: &'a [Seg],
}

impl fmt::Display for WalkPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut empty = self.prefix.is_empty();
        self.prefix.fmt(f)?;
        for seg in self.segs {
            match seg {
                Seg::Name(n) => {
                    if !empty {
                        f.write_str(".")?;
                    }
                    f.write_str(n)?;
                }
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
            empty = false;
        }
        Ok(())
    }
}
