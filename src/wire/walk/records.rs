//! The glue between the walker and the [`RecordsHook`]: which topic the records below a struct
//! belong to, and handing a `records` field's bytes to the hook.

use super::checks::WalkPath;
use super::Walker;
use crate::diag::FieldPath;
use crate::schema::model::Entity;
use crate::wire::hook::{RecordsField, RecordsHook, RecordsOptions};
use crate::wire::plan::{FieldPlan, Ty};
use crate::wire::tree::{Kind, Span, Value};

/// The topic of the records below, as the innermost enclosing struct names it.
#[derive(Clone, Copy)]
pub(super) enum TopicRef {
    Name(Span),
    Id([u8; 16]),
}

impl Walker<'_, '_> {
    /// After field `f` was decoded (its node is the last one): remembers it when it names the
    /// topic of the records below (Produce `TopicData[].Name`, Fetch `Responses[].Topic`, …,
    /// the `topicName` entities): the innermost enclosing struct's one is used. A topic known
    /// only by id (Fetch v13+, Produce v13) is named through the caller's `TopicNames`, when
    /// it gives one; otherwise the topic stays unknown.
    pub(super) fn note_topic(&mut self, f: &FieldPlan) {
        // Only a leaf names the topic (not the last element of an array of topic names).
        if self.records.is_none() || !matches!(f.ty, Ty::Prim(_)) {
            return;
        }
        let value = match self.tree.nodes.last() {
            Some(n) if n.entity == f.entity => n.value,
            _ => return,
        };
        match (f.entity, value) {
            (Entity::TopicName, Value::Str(s)) => self.topic = Some(TopicRef::Name(s)),
            (Entity::TopicId, Value::Uuid(u)) if self.names.is_some() => {
                self.topic = Some(TopicRef::Id(u))
            }
            _ => {}
        }
    }

    /// A `records` field's content, decoded by the hook: an `Array` node whose header is the
    /// length prefix.
    pub(super) fn batches(
        &mut self,
        hook: &dyn RecordsHook,
        options: RecordsOptions,
        name: &'static str,
        pos: usize,
        hdr: usize,
        span: Span,
    ) -> usize {
        let data = self.data;
        let names = self.names;
        let topic = self.topic.and_then(|t| match t {
            TopicRef::Name(s) => {
                let b = data.get(s.start as usize..(s.start + s.len) as usize)?;
                std::str::from_utf8(b).ok()
            }
            TopicRef::Id(u) => names?.topic_name(u),
        });
        let id = self.tree.open(name, Kind::Array, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        // Most fetch responses carry empty records: no path to name, nothing to allocate.
        if span.len > 0 {
            let shown = WalkPath {
                prefix: self.prefix,
                segs: self.path,
            };
            let field = RecordsField {
                topic,
                direction: self.direction,
                options,
                path: FieldPath::Shown(&shown),
            };
            hook.decode(self.tree, self.buf, span, &field);
        }
        let end = span.start + span.len;
        self.tree.close(id, end);
        end as usize
    }
}
