//! The encoder: decoded-PDU JSON (CONTRACT.md, non-annotated) back to the exact bytes, walking
//! the same compiled plans as the decoder. `records` fields shown as decoded batches go back
//! through the caller's [`RecordsHook`]; the JSON itself is rendered by the printers
//! (`output::value`).
//!
//! Tagged fields are written iff present in the JSON, in ascending tag order merged with
//! `_unknown_tagged_fields`; every untagged field present at the version is required.

use super::cursor::put_uvarint;
use super::hook::RecordsHook;
use super::plan::{Plan, Ty};
use super::walk::TAGS;
use crate::pdu::Direction;
use crate::protocol::headers::header_version;
use crate::protocol::Protocol;
use crate::schema::model::Prim;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::Value as J;
use std::fmt;

/// Why JSON could not be encoded: where (`path`, e.g. `body.Topics[0].Name`) and what was
/// expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for EncodeError {}

pub(crate) fn err(path: &str, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: path.to_string(),
        message: message.into(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// The member key under which unknown tagged fields travel.
pub const UNKNOWN_TAGS: &str = "_unknown_tagged_fields";

/// Encodes one decoded-PDU JSON object (CONTRACT.md; the non-annotated form) to the frame's
/// bytes: `direction`, `api_key` and `api_version` (for a response, its request's) pick the
/// header and body schemas as Kafka does; a size prefix is written when `length` is present. A
/// raw SASL token is `{"token": base64}`. `records` fields shown as arrays (decoded batches) are
/// encoded by `records` (`records::encode_pdu` passes `records::BATCHES`); without a hook only
/// their base64 form is accepted.
pub fn encode_pdu(
    proto: &'static Protocol,
    pdu_json: &J,
    records: Option<&dyn RecordsHook>,
) -> Result<Vec<u8>, EncodeError> {
    let obj = pdu_json
        .as_object()
        .ok_or_else(|| err("", "expected a PDU object"))?;
    let mut out = Vec::new();
    let prefixed = obj.contains_key("length");
    if prefixed {
        out.extend_from_slice(&[0; 4]);
    }
    if let Some(tok) = obj.get("token") {
        let b64 = tok
            .as_str()
            .ok_or_else(|| err("token", "expected base64"))?;
        out.extend(
            STANDARD
                .decode(b64)
                .map_err(|e| err("token", format!("invalid base64: {e}")))?,
        );
    } else {
        let dir = match obj.get("direction").and_then(J::as_str) {
            Some("request") => Direction::Request,
            Some("response") => Direction::Response,
            _ => return Err(err("direction", "expected \"request\" or \"response\"")),
        };
        let num = |k: &str| {
            obj.get(k)
                .and_then(J::as_i64)
                .and_then(|n| i16::try_from(n).ok())
                .ok_or_else(|| err(k, "expected an integer -32768..=32767"))
        };
        let (key, ver) = (num("api_key")?, num("api_version")?);
        // An API no release defines: the decoder showed its header as v1 / v0; so do we.
        let hv = header_version(proto, dir, key, ver).unwrap_or(match dir {
            Direction::Request => 1,
            Direction::Response => 0,
        });
        let h = proto.header(dir, hv).ok_or_else(|| {
            err(
                "header",
                format!("no {} header v{hv} in this protocol", dir.as_str()),
            )
        })?;
        let hj = obj.get("header").ok_or_else(|| err("header", "missing"))?;
        let header_stopped = encode_until_error(
            &super::plan::shared(h.spec, hv),
            hj,
            &mut out,
            "header",
            None,
        )?;
        let bj = match obj.get("body") {
            Some(b) => b,
            // An undecodable header took the rest of the frame: there is no body to write.
            None if header_stopped => &J::Null,
            None => return Err(err("body", "missing")),
        };
        if bj.is_null() && header_stopped {
        } else if let Some(d) = error_data(bj, "body") {
            // An unknown API or version: the body was kept as raw bytes.
            out.extend(d?);
        } else {
            let b = proto.message(key, ver, dir).ok_or_else(|| {
                err(
                    "api_version",
                    format!("API {key} has no {} version {ver}", dir.as_str()),
                )
            })?;
            let plan = super::plan::shared(b.spec, ver);
            encode_until_error(&plan, bj, &mut out, "body", records)?;
        }
        if let Some(t) = obj.get(TRAILING) {
            let bytes = match (error_data(t, TRAILING), t.as_str()) {
                (Some(d), _) => d?,
                (None, Some(b64)) => STANDARD
                    .decode(b64)
                    .map_err(|e| err(TRAILING, format!("invalid base64: {e}")))?,
                (None, None) => {
                    return Err(err(TRAILING, "expected {\"_error\",\"_data\"} or base64"))
                }
            };
            out.extend(bytes);
        }
    }
    if prefixed {
        let size = i32::try_from(out.len() - 4).map_err(|_| err("", "frame larger than 2 GiB"))?;
        out[..4].copy_from_slice(&size.to_be_bytes());
    }
    Ok(out)
}

/// Root member holding bytes found after the body (`trailing-bytes`), an `Error` node printed
/// as `{"_error","_data"}` (plain base64 is accepted too).
pub const TRAILING: &str = "_trailing";

/// Encodes `json` (a struct object) as the plan's message, appending to `out`. `records` fields
/// must be base64 (messages inside records and headers have none).
pub fn encode_message(
    plan: &Plan,
    json: &J,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), EncodeError> {
    encode_until_error(plan, json, out, path, None).map(|_| ())
}

/// Like [`encode_message`]; `true` when an undecodable region ran to the end of the input.
fn encode_until_error(
    plan: &Plan,
    json: &J,
    out: &mut Vec<u8>,
    path: &str,
    records: Option<&dyn RecordsHook>,
) -> Result<bool, EncodeError> {
    let mut e = Enc {
        plan,
        records,
        depth: 0,
        stopped: false,
    };
    e.structure(plan.root, json, false, false, out, path)?;
    Ok(e.stopped)
}

struct Enc<'p> {
    plan: &'p Plan,
    records: Option<&'p dyn RecordsHook>,
    depth: usize,
    /// An undecodable region (`{"_error","_data"}`) was written: it runs to the end of the
    /// enclosing bounded region (a tagged field or the message), so nothing more is written
    /// until then.
    stopped: bool,
}

/// The bytes of an `Error` node as the printers show it: `{"_error": code, "_data": base64}`.
fn error_data(v: &J, path: &str) -> Option<Result<Vec<u8>, EncodeError>> {
    let o = v.as_object()?;
    o.get("_error")?;
    Some(match o.get("_data").and_then(J::as_str) {
        Some(d) => STANDARD
            .decode(d)
            .map_err(|e| err(path, format!("invalid base64 in \"_data\": {e}"))),
        None => Err(err(
            path,
            "an undecodable region ({\"_error\"}) needs its \"_data\" to be re-encoded",
        )),
    })
}

/// Members that are not schema fields but carry bytes the decoder could not place.
const EXCESS: &str = "_excess";
/// A topic name the printer added next to a `TopicId` (not on the wire; see `output::json`).
const TOPIC_NAME: &str = "_topic_name";

impl Enc<'_> {
    fn structure(
        &mut self,
        sid: u32,
        json: &J,
        nullable: bool,
        in_tag: bool,
        out: &mut Vec<u8>,
        path: &str,
    ) -> Result<(), EncodeError> {
        if let Some(d) = error_data(json, path) {
            out.extend(d?);
            self.stopped = true;
            return Ok(());
        }
        if json.is_null() {
            if !nullable {
                return Err(err(
                    path,
                    "null where this version does not allow a null struct",
                ));
            }
            // Tagged nullable structs use a uvarint marker (0 = null), others an int8 (-1).
            out.push(if in_tag { 0 } else { 0xff });
            return Ok(());
        }
        let obj = json
            .as_object()
            .ok_or_else(|| err(path, format!("expected an object, found {}", kind(json))))?;
        if nullable {
            out.push(1);
        }
        self.depth += 1;
        if self.depth > crate::limits::MAX_DEPTH {
            return Err(err(path, "nesting deeper than the depth limit"));
        }
        let sp = self.plan.structure(sid);
        for f in &sp.fields {
            let p = join(path, f.name);
            let v = obj.get(f.name).ok_or_else(|| {
                err(
                    &p,
                    format!(
                        "missing field {} (on the wire at version {})",
                        f.name, self.plan.version
                    ),
                )
            })?;
            self.value(&f.ty, v, f.nullable, f.compact, false, out, &p)?;
            if self.stopped {
                self.depth -= 1;
                return Ok(());
            }
        }
        for k in obj.keys() {
            let known = sp.fields.iter().chain(&sp.tagged).any(|f| f.name == k)
                || (sp.flexible && (k == UNKNOWN_TAGS || k == TAGS))
                || k == EXCESS
                || k == TOPIC_NAME;
            if !known {
                return Err(err(
                    &join(path, k),
                    format!(
                        "no field {k} in {} at version {}",
                        sp.name, self.plan.version
                    ),
                ));
            }
        }
        if let Some(d) = obj.get(TAGS).and_then(|v| error_data(v, &join(path, TAGS))) {
            out.extend(d?);
            self.stopped = true;
            self.depth -= 1;
            return Ok(());
        }
        if sp.flexible {
            // (tag, bytes, whether the bytes are a whole raw entry with its tag and size)
            let mut tags: Vec<(u32, Vec<u8>, bool)> = Vec::new();
            for f in &sp.tagged {
                if let Some(v) = obj.get(f.name) {
                    let mut buf = Vec::new();
                    self.value(
                        &f.ty,
                        v,
                        f.nullable,
                        true,
                        true,
                        &mut buf,
                        &join(path, f.name),
                    )?;
                    // The tag's declared size bounds an undecodable region inside it.
                    self.stopped = false;
                    // An undecodable tagged field keeps its whole entry, tag and size included.
                    let raw = error_data(v, "").is_some();
                    tags.push((f.tag.unwrap_or(u32::MAX), buf, raw));
                }
            }
            if let Some(u) = obj.get(UNKNOWN_TAGS) {
                let p = join(path, UNKNOWN_TAGS);
                let arr = u
                    .as_array()
                    .ok_or_else(|| err(&p, "expected an array of {\"tag\",\"data\"}"))?;
                for (i, e) in arr.iter().enumerate() {
                    let ep = format!("{p}[{i}]");
                    let tag = e
                        .get("tag")
                        .and_then(J::as_u64)
                        .and_then(|t| u32::try_from(t).ok());
                    let tag =
                        tag.ok_or_else(|| err(&ep, "expected \"tag\": an integer 0..=4294967295"))?;
                    let data = e
                        .get("data")
                        .and_then(J::as_str)
                        .ok_or_else(|| err(&ep, "expected \"data\": base64"))?;
                    let bytes = STANDARD
                        .decode(data)
                        .map_err(|e| err(&ep, format!("invalid base64 in \"data\": {e}")))?;
                    tags.push((tag, bytes, false));
                }
            }
            tags.sort_by_key(|t| t.0);
            if let Some(w) = tags.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(err(path, format!("tag {} given twice", w[0].0)));
            }
            put_uvarint(out, tags.len() as u32);
            for (tag, payload, raw) in tags {
                if !raw {
                    put_uvarint(out, tag);
                    put_uvarint(out, payload.len() as u32);
                }
                out.extend_from_slice(&payload);
            }
        }
        // Bytes a known tag declared beyond this struct's content (`tag-size-mismatch`).
        if let Some(d) = obj
            .get(EXCESS)
            .and_then(|v| error_data(v, &join(path, EXCESS)))
        {
            out.extend(d?);
        }
        self.depth -= 1;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        ty: &Ty,
        v: &J,
        nullable: bool,
        compact: bool,
        in_tag: bool,
        out: &mut Vec<u8>,
        path: &str,
    ) -> Result<(), EncodeError> {
        if let Some(d) = error_data(v, path) {
            out.extend(d?);
            self.stopped = true;
            return Ok(());
        }
        match (ty, v, self.records) {
            (Ty::Prim(Prim::Records), J::Array(items), Some(hook)) => {
                // Decoded batches: encoded back field by field by the hook.
                let mut b = Vec::new();
                hook.encode(items, &mut b, path)?;
                let n =
                    i32::try_from(b.len()).map_err(|_| err(path, "records of more than 2 GiB"))?;
                put_len(out, n, compact, true);
                out.extend(b);
                Ok(())
            }
            _ => self.typed(ty, v, nullable, compact, in_tag, out, path),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn typed(
        &mut self,
        ty: &Ty,
        v: &J,
        nullable: bool,
        compact: bool,
        in_tag: bool,
        out: &mut Vec<u8>,
        path: &str,
    ) -> Result<(), EncodeError> {
        match ty {
            Ty::Prim(p) => prim(*p, v, nullable, compact, out, path),
            Ty::Struct(sid) => self.structure(*sid, v, nullable, in_tag, out, path),
            Ty::TooDeep => Err(err(path, "schema nesting deeper than the depth limit")),
            Ty::Array(elem) => {
                if v.is_null() {
                    if !nullable {
                        return Err(err(
                            path,
                            "null where this version does not allow a null array",
                        ));
                    }
                    put_len(out, -1, compact, true);
                    return Ok(());
                }
                let arr = v
                    .as_array()
                    .ok_or_else(|| err(path, format!("expected an array, found {}", kind(v))))?;
                let n = i32::try_from(arr.len()).map_err(|_| err(path, "array too long"))?;
                put_len(out, n, compact, true);
                for (i, e) in arr.iter().enumerate() {
                    self.value(elem, e, false, compact, false, out, &format!("{path}[{i}]"))?;
                    if self.stopped {
                        break;
                    }
                }
                Ok(())
            }
        }
    }
}

fn kind(v: &J) -> &'static str {
    match v {
        J::Null => "null",
        J::Bool(_) => "a bool",
        J::Number(_) => "a number",
        J::String(_) => "a string",
        J::Array(_) => "an array",
        J::Object(_) => "an object",
    }
}

/// A length or count prefix; -1 = null.
fn put_len(out: &mut Vec<u8>, n: i32, compact: bool, wide: bool) {
    if compact {
        put_uvarint(out, (n as u32).wrapping_add(1));
    } else if wide {
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.extend_from_slice(&(n as i16).to_be_bytes());
    }
}

fn int(v: &J, lo: i64, hi: i64, path: &str, what: &str) -> Result<i64, EncodeError> {
    match v.as_i64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(err(
            path,
            format!("expected {what}: an integer {lo}..={hi}, found {v}"),
        )),
    }
}

fn prim(
    p: Prim,
    v: &J,
    nullable: bool,
    compact: bool,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), EncodeError> {
    match p {
        Prim::Bool => out.push(
            v.as_bool()
                .ok_or_else(|| err(path, format!("expected bool, found {v}")))? as u8,
        ),
        Prim::Int8 => out.push(int(v, i8::MIN.into(), i8::MAX.into(), path, "int8")? as i8 as u8),
        Prim::Int16 => out.extend_from_slice(
            &(int(v, i16::MIN.into(), i16::MAX.into(), path, "int16")? as i16).to_be_bytes(),
        ),
        Prim::Uint16 => out
            .extend_from_slice(&(int(v, 0, u16::MAX.into(), path, "uint16")? as u16).to_be_bytes()),
        Prim::Int32 => out.extend_from_slice(
            &(int(v, i32::MIN.into(), i32::MAX.into(), path, "int32")? as i32).to_be_bytes(),
        ),
        Prim::Uint32 => out
            .extend_from_slice(&(int(v, 0, u32::MAX.into(), path, "uint32")? as u32).to_be_bytes()),
        Prim::Int64 => {
            out.extend_from_slice(&int(v, i64::MIN, i64::MAX, path, "int64")?.to_be_bytes())
        }
        Prim::Float64 => {
            let f = match v {
                J::Number(n) => n.as_f64(),
                J::String(s) if s == "NaN" => Some(f64::NAN),
                J::String(s) if s == "Infinity" => Some(f64::INFINITY),
                J::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
                _ => None,
            };
            let f = f.ok_or_else(|| err(path, format!("expected float64 (a number, \"NaN\", \"Infinity\" or \"-Infinity\"), found {v}")))?;
            out.extend_from_slice(&f.to_be_bytes());
        }
        Prim::Uuid => {
            let s = v.as_str().ok_or_else(|| {
                err(
                    path,
                    format!("expected uuid (22-char base64url), found {v}"),
                )
            })?;
            let b = URL_SAFE_NO_PAD.decode(s).ok().filter(|b| b.len() == 16);
            out.extend_from_slice(&b.ok_or_else(|| {
                err(
                    path,
                    format!("expected uuid (22-char base64url of 16 bytes), found {s:?}"),
                )
            })?);
        }
        Prim::String | Prim::Bytes | Prim::Records => {
            let wide = p != Prim::String;
            if v.is_null() {
                if !nullable {
                    return Err(err(
                        path,
                        format!(
                            "null where this version does not allow a null {}",
                            p.as_str()
                        ),
                    ));
                }
                put_len(out, -1, compact, wide);
                return Ok(());
            }
            let bytes: std::borrow::Cow<[u8]> = match (p, v) {
                (Prim::String, J::String(s)) => s.as_bytes().into(),
                (Prim::String, _) => {
                    return Err(err(path, format!("expected a string, found {}", kind(v))))
                }
                (_, J::String(s)) => STANDARD
                    .decode(s)
                    .map_err(|e| err(path, format!("expected base64 {}: {e}", p.as_str())))?
                    .into(),
                _ => {
                    return Err(err(
                        path,
                        format!("expected base64 {}, found {}", p.as_str(), kind(v)),
                    ))
                }
            };
            let max = if wide {
                i32::MAX as usize
            } else {
                i16::MAX as usize
            };
            if bytes.len() > max {
                return Err(err(
                    path,
                    format!("{} of {} bytes exceeds {max}", p.as_str(), bytes.len()),
                ));
            }
            put_len(out, bytes.len() as i32, compact, wide);
            out.extend_from_slice(&bytes);
        }
    }
    Ok(())
}
