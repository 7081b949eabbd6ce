//! The schema model: Kafka's message-spec JSON as typed Rust values.
//!
//! One model feeds the decoder (through compiled plans), the encoder, the validator, the fuzz
//! generator and the `apis` listing. It keeps what the wire needs and where each value came
//! from (`Pos`), never the specs' prose.

use super::versions::Versions;
use std::sync::Arc;

/// A position in a spec file: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// The `type` of a spec file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecType {
    Request,
    Response,
    Header,
    Metadata,
    Data,
    CoordinatorKey,
    CoordinatorValue,
}

impl SpecType {
    pub fn parse(s: &str) -> Option<SpecType> {
        Some(match s {
            "request" => SpecType::Request,
            "response" => SpecType::Response,
            "header" => SpecType::Header,
            "metadata" => SpecType::Metadata,
            "data" => SpecType::Data,
            "coordinator-key" => SpecType::CoordinatorKey,
            "coordinator-value" => SpecType::CoordinatorValue,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            SpecType::Request => "request",
            SpecType::Response => "response",
            SpecType::Header => "header",
            SpecType::Metadata => "metadata",
            SpecType::Data => "data",
            SpecType::CoordinatorKey => "coordinator-key",
            SpecType::CoordinatorValue => "coordinator-value",
        }
    }

    /// Spec types that carry an `apiKey` (headers and plain data structures do not): the
    /// validator requires it on them, and compat pairs specs of these types by it.
    pub fn is_keyed(self) -> bool {
        matches!(
            self,
            SpecType::Request
                | SpecType::Response
                | SpecType::Metadata
                | SpecType::CoordinatorKey
                | SpecType::CoordinatorValue
        )
    }
}

/// A primitive spec type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uuid,
    Float64,
    String,
    Bytes,
    Records,
}

impl Prim {
    pub fn parse(s: &str) -> Option<Prim> {
        Some(match s {
            "bool" => Prim::Bool,
            "int8" => Prim::Int8,
            "int16" => Prim::Int16,
            "uint16" => Prim::Uint16,
            "int32" => Prim::Int32,
            "uint32" => Prim::Uint32,
            "int64" => Prim::Int64,
            "uuid" => Prim::Uuid,
            "float64" => Prim::Float64,
            "string" => Prim::String,
            "bytes" => Prim::Bytes,
            "records" => Prim::Records,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::Int8 => "int8",
            Prim::Int16 => "int16",
            Prim::Uint16 => "uint16",
            Prim::Int32 => "int32",
            Prim::Uint32 => "uint32",
            Prim::Int64 => "int64",
            Prim::Uuid => "uuid",
            Prim::Float64 => "float64",
            Prim::String => "string",
            Prim::Bytes => "bytes",
            Prim::Records => "records",
        }
    }
    /// Types that may carry `nullableVersions`.
    pub fn can_be_null(self) -> bool {
        matches!(self, Prim::String | Prim::Bytes | Prim::Records)
    }
    pub const ALL: [Prim; 12] = [
        Prim::Bool,
        Prim::Int8,
        Prim::Int16,
        Prim::Uint16,
        Prim::Int32,
        Prim::Uint32,
        Prim::Int64,
        Prim::Uuid,
        Prim::Float64,
        Prim::String,
        Prim::Bytes,
        Prim::Records,
    ];
}

/// A field's type: a primitive, a struct (by name), or an array of either.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    Prim(Prim),
    Struct(Arc<str>),
    Array(Box<FieldType>),
}

impl FieldType {
    pub fn is_array(&self) -> bool {
        matches!(self, FieldType::Array(_))
    }
    pub fn is_struct(&self) -> bool {
        matches!(self, FieldType::Struct(_))
    }
    /// The element type of an array, or the type itself.
    pub fn element(&self) -> &FieldType {
        match self {
            FieldType::Array(e) => e,
            t => t,
        }
    }
    /// The struct name this type (or its element) refers to.
    pub fn struct_name(&self) -> Option<&str> {
        match self.element() {
            FieldType::Struct(n) => Some(n),
            _ => None,
        }
    }
}

/// Java's `String.trim()`: strips code points up to U+0020 only, so a non-breaking space
/// stays (and makes the value invalid, as it does for Kafka).
pub fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

impl FieldType {
    /// Kafka's type grammar: a primitive, `[]T` for a non-array `T`, or a struct name (anything
    /// starting with an upper-case letter, Unicode-aware like Java's `Character.isUpperCase`).
    /// The input is trimmed first, as Kafka does.
    pub fn parse(text: &str) -> Result<FieldType, String> {
        let t = java_trim(text);
        if let Some(inner) = t.strip_prefix("[]") {
            if inner.is_empty() {
                return Err(format!("no element type after `[]` in type {t:?}"));
            }
            // Kafka parses the element recursively, so it is trimmed again.
            let inner = java_trim(inner);
            if inner.starts_with("[]") {
                return Err(format!(
                    "type {t:?} is an array of arrays, which Kafka does not support"
                ));
            }
            return match FieldType::parse_element(inner) {
                Some(e) => Ok(FieldType::Array(Box::new(e))),
                None => Err(format!("cannot parse element type {inner:?} of {t:?}")),
            };
        }
        FieldType::parse_element(t).ok_or_else(|| {
            format!("cannot parse type {t:?}: expected a primitive, []T, or a struct name starting with an upper-case letter")
        })
    }
    fn parse_element(t: &str) -> Option<FieldType> {
        if let Some(p) = Prim::parse(t) {
            return Some(FieldType::Prim(p));
        }
        t.chars()
            .next()
            .filter(|c| c.is_uppercase())
            .map(|_| FieldType::Struct(t.into()))
    }
}

impl std::fmt::Display for FieldType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldType::Prim(p) => f.write_str(p.as_str()),
            FieldType::Struct(n) => f.write_str(n),
            FieldType::Array(e) => write!(f, "[]{e}"),
        }
    }
}

/// One field of a message or struct.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: Arc<str>,
    pub ty: FieldType,
    pub versions: Versions,
    /// Versions in which the value may be null (`Versions::NONE` when absent).
    pub nullable_versions: Versions,
    /// Versions in which the field travels in the tagged section (`Versions::NONE` when absent).
    pub tagged_versions: Versions,
    pub tag: Option<u32>,
    /// Field-level `flexibleVersions` override (only `RequestHeader.ClientId` upstream).
    pub flexible_versions: Option<Versions>,
    /// The `default` as written (JSON numbers and booleans become their text, JSON null is `None`).
    pub default: Option<String>,
    pub ignorable: bool,
    pub map_key: bool,
    pub entity_type: Option<Arc<str>>,
    pub zero_copy: bool,
    /// Inline struct fields (`fields` in the spec). Empty for primitives and for references to
    /// common structs: resolve those with [`MessageSpec::struct_fields`].
    pub fields: Vec<Field>,
    pub pos: Pos,
    /// The `type` exactly as written (trimmed), e.g. `[]TopicData`.
    pub type_text: Arc<str>,
    /// Each property present in the file and where its key is, in file order (the last of a
    /// duplicated key), so diagnostics can point at the property rather than the field.
    pub props: Vec<(&'static str, Pos)>,
}

impl Default for Field {
    fn default() -> Field {
        Field {
            name: "".into(),
            ty: FieldType::Prim(Prim::Int32),
            versions: Versions::NONE,
            nullable_versions: Versions::NONE,
            tagged_versions: Versions::NONE,
            tag: None,
            flexible_versions: None,
            default: None,
            ignorable: false,
            map_key: false,
            entity_type: None,
            zero_copy: false,
            fields: Vec::new(),
            pos: Pos::default(),
            type_text: "int32".into(),
            props: Vec::new(),
        }
    }
}

/// Where property `name` is in `props`, else `fallback`.
pub fn prop_pos(props: &[(&'static str, Pos)], name: &str, fallback: Pos) -> Pos {
    props
        .iter()
        .rev()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
        .unwrap_or(fallback)
}

/// What a field's value identifies, from the spec's `entityType` (one byte in every decoded
/// node, so printers and the session never guess meaning from a field's name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Entity {
    #[default]
    None,
    /// `entityType: topicName`.
    TopicName,
    /// A topic's uuid. Kafka's specs give topic ids no `entityType`; see [`Field::entity`].
    TopicId,
    /// `entityType: groupId`.
    GroupId,
    /// `entityType: transactionalId`.
    TransactionalId,
    /// `entityType: producerId`.
    ProducerId,
    /// `entityType: brokerId`.
    BrokerId,
}

impl Entity {
    /// The `entityType` values Kafka's specs use; any other (a user's overlay) is `None`.
    pub fn from_entity_type(s: &str) -> Entity {
        match s {
            "topicName" => Entity::TopicName,
            "groupId" => Entity::GroupId,
            "transactionalId" => Entity::TransactionalId,
            "producerId" => Entity::ProducerId,
            "brokerId" => Entity::BrokerId,
            _ => Entity::None,
        }
    }
}

impl Field {
    /// What the field's value identifies (an array's: what each element identifies): its
    /// `entityType`. One rule fills a gap of the specs: no topic id has an `entityType`
    /// (96 `uuid` fields called `TopicId` in 3.9.0 ∪ 4.3.1, 60 of them in structs with no topic
    /// name to pair them with), so a `uuid` field named exactly `TopicId` is [`Entity::TopicId`].
    pub fn entity(&self) -> Entity {
        match &self.entity_type {
            Some(e) => Entity::from_entity_type(e),
            None if &*self.name == "TopicId" && self.ty == FieldType::Prim(Prim::Uuid) => {
                Entity::TopicId
            }
            None => Entity::None,
        }
    }

    /// Where property `name` (e.g. `"taggedVersions"`) is written, else the field itself.
    pub fn prop_pos(&self, name: &str) -> Pos {
        prop_pos(&self.props, name, self.pos)
    }
    /// Whether the file gives property `name` (defaults are not given).
    pub fn has_prop(&self, name: &str) -> bool {
        self.props.iter().any(|(n, _)| *n == name)
    }
    /// On the wire as a regular (untagged) field at version `v`.
    pub fn is_regular_in(&self, v: i16) -> bool {
        self.versions.contains(v) && !self.tagged_versions.contains(v)
    }
    /// In the tagged section at version `v`.
    pub fn is_tagged_in(&self, v: i16) -> bool {
        self.versions.contains(v) && self.tagged_versions.contains(v)
    }
    pub fn is_nullable_in(&self, v: i16) -> bool {
        self.nullable_versions.contains(v)
    }
}

/// A `commonStructs` entry.
#[derive(Clone, Debug)]
pub struct StructSpec {
    pub name: Arc<str>,
    pub versions: Versions,
    pub fields: Vec<Field>,
    pub pos: Pos,
    pub deprecated_versions: Versions,
    /// Properties present in the file and where their keys are (see [`Field::props`]).
    pub props: Vec<(&'static str, Pos)>,
}

impl StructSpec {
    pub fn prop_pos(&self, name: &str) -> Pos {
        prop_pos(&self.props, name, self.pos)
    }
}

/// One spec file.
#[derive(Clone, Debug)]
pub struct MessageSpec {
    pub name: Arc<str>,
    pub spec_type: SpecType,
    pub api_key: Option<i16>,
    pub valid_versions: Versions,
    pub flexible_versions: Versions,
    pub deprecated_versions: Versions,
    pub listeners: Vec<Arc<str>>,
    pub latest_version_unstable: bool,
    /// Proposed `headerVersions` property (accepted and checked; not upstream yet).
    pub header_versions: Option<Versions>,
    pub fields: Vec<Field>,
    pub common_structs: Vec<StructSpec>,
    /// Where the spec came from, e.g. `clients/src/main/resources/common/message/FetchRequest.json`.
    pub path: Arc<str>,
    /// Position of the root object.
    pub pos: Pos,
    /// Properties present in the file and where their keys are (see [`Field::props`]).
    pub props: Vec<(&'static str, Pos)>,
}

impl Default for MessageSpec {
    fn default() -> MessageSpec {
        MessageSpec {
            name: "".into(),
            spec_type: SpecType::Data,
            api_key: None,
            valid_versions: Versions::NONE,
            flexible_versions: Versions::NONE,
            deprecated_versions: Versions::NONE,
            listeners: Vec::new(),
            latest_version_unstable: false,
            header_versions: None,
            fields: Vec::new(),
            common_structs: Vec::new(),
            path: "".into(),
            pos: Pos::default(),
            props: Vec::new(),
        }
    }
}

impl MessageSpec {
    pub fn prop_pos(&self, name: &str) -> Pos {
        prop_pos(&self.props, name, self.pos)
    }
    pub fn has_prop(&self, name: &str) -> bool {
        self.props.iter().any(|(n, _)| *n == name)
    }
    /// Whether version `v` of this message has a field of type `prim` anywhere, in a struct or
    /// array at any depth (as deep as [`crate::limits::MAX_DEPTH`]: a user's overlay may define
    /// common structs that refer to each other).
    pub fn has_prim(&self, prim: Prim, v: i16) -> bool {
        fn any(spec: &MessageSpec, fields: &[Field], prim: Prim, v: i16, depth: usize) -> bool {
            depth < crate::limits::MAX_DEPTH
                && fields.iter().any(|f| {
                    f.versions.contains(v)
                        && match f.ty.element() {
                            FieldType::Prim(p) => *p == prim,
                            _ => any(spec, spec.struct_fields(f), prim, v, depth + 1),
                        }
                })
        }
        any(self, &self.fields, prim, v, 0)
    }
    /// The fields of the struct a field holds (inline `fields`, else the common struct of that
    /// name). Empty for primitives, and for a struct type that is never defined (Kafka accepts
    /// that silently: it becomes an empty struct).
    pub fn struct_fields<'a>(&'a self, field: &'a Field) -> &'a [Field] {
        if !field.fields.is_empty() {
            return &field.fields;
        }
        match field.ty.struct_name() {
            Some(name) => self
                .common_struct(name)
                .map(|s| &s.fields[..])
                .unwrap_or(&[]),
            None => &[],
        }
    }
    pub fn common_struct(&self, name: &str) -> Option<&StructSpec> {
        self.common_structs.iter().find(|s| &*s.name == name)
    }
    pub fn is_flexible(&self, v: i16) -> bool {
        self.flexible_versions.contains(v)
    }
    /// The API name: the spec name without its `Request`/`Response` suffix.
    pub fn api_name(&self) -> &str {
        self.name
            .strip_suffix("Request")
            .or_else(|| self.name.strip_suffix("Response"))
            .unwrap_or(&self.name)
    }
}
