//! Default values (D1–D9 of `reference/kafka-generator-rules.md` §4a), checked as Kafka's
//! generator checks them while writing code, plus lints for a leading-zero integer (D2a: the
//! generator validates it as decimal but Java reads the emitted literal as octal) and a
//! default on a records field (D7: ignored).

use super::walk::{type_ok, Cx};
use crate::schema::model::{Field, FieldType, Prim};
use base64::engine::general_purpose::GeneralPurpose;
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
use base64::Engine;

pub fn check(cx: &mut Cx) {
    if !cx.generates_code() {
        return;
    }
    for (si, f) in cx.all_fields() {
        let Some(d) = &f.default else { continue };
        if !type_ok(f) {
            continue;
        }
        let path = cx.structs[si].member_path(f);
        match &f.ty {
            FieldType::Prim(p) => prim(cx, f, *p, d, &path),
            FieldType::Struct(_) => container(cx, f, d, &path, "struct", "the empty struct"),
            FieldType::Array(_) => container(cx, f, d, &path, "array", "the empty array"),
        }
    }
}

fn prim(cx: &mut Cx, f: &Field, p: Prim, d: &str, path: &str) {
    let pos = f.prop_pos("default");
    let problem: Option<String> = match p {
        Prim::Bool => {
            (!(d.is_empty() || d.eq_ignore_ascii_case("true") || d.eq_ignore_ascii_case("false")))
                .then(|| format!("default {d:?} is not a bool: expected true or false"))
        }
        Prim::Int8 => int(d, i8::MIN as i128, i8::MAX as i128, "int8"),
        Prim::Int16 => int(d, i16::MIN as i128, i16::MAX as i128, "int16"),
        Prim::Int32 => int(d, i32::MIN as i128, i32::MAX as i128, "int32"),
        Prim::Int64 => int(d, i64::MIN as i128, i64::MAX as i128, "int64"),
        // Parsed as int / long, then range-checked.
        Prim::Uint16 => int(d, i32::MIN as i128, i32::MAX as i128, "uint16")
            .or_else(|| unsigned(d, 65_535, "uint16")),
        Prim::Uint32 => int(d, i64::MIN as i128, i64::MAX as i128, "uint32")
            .or_else(|| unsigned(d, 4_294_967_295, "uint32")),
        Prim::Uuid => uuid(d),
        Prim::Float64 => (!d.is_empty() && !java_double(d)).then(|| {
            format!("default {d:?} is not a float64 (Java's Double.parseDouble rejects it)")
        }),
        Prim::String => {
            if d == "null" {
                null_default(cx, f, path);
            }
            None
        }
        Prim::Bytes => {
            if d == "null" {
                null_default(cx, f, path);
                None
            } else if !d.is_empty() {
                Some(format!("default {d:?} is not allowed for bytes: the only defaults are \"\" (empty) and \"null\""))
            } else {
                None
            }
        }
        Prim::Records => {
            if !d.is_empty() {
                cx.warning(
                    "records-default-ignored",
                    pos,
                    path,
                    format!("default {d:?} is ignored: a records field always defaults to null"),
                );
            }
            None
        }
    };
    if let Some(msg) = problem {
        cx.error("invalid-default", pos, path, msg);
        return;
    }
    if matches!(
        p,
        Prim::Int8 | Prim::Int16 | Prim::Int32 | Prim::Int64 | Prim::Uint16 | Prim::Uint32
    ) && leading_zero(d)
    {
        cx.warning(
            "leading-zero-default",
            pos,
            path,
            format!("default {d:?} has a leading zero: Kafka checks it as decimal but emits it as a Java literal, which reads it as octal; drop the zero"),
        );
    }
}

/// Struct and array defaults: `""` (empty) or `"null"`.
fn container(cx: &mut Cx, f: &Field, d: &str, path: &str, kind: &str, empty: &str) {
    if d == "null" {
        null_default(cx, f, path);
    } else if !d.is_empty() {
        cx.error(
            "invalid-default",
            f.prop_pos("default"),
            path,
            format!("default {d:?} is not allowed for a {kind}: the only defaults are \"\" ({empty}) and \"null\""),
        );
    }
}

/// D5: a null default needs the field nullable in all of its versions.
fn null_default(cx: &mut Cx, f: &Field, path: &str) {
    if !f.versions.is_subset_of(f.nullable_versions) {
        cx.error(
            "null-default-not-nullable",
            f.prop_pos("default"),
            path,
            format!(
                "default \"null\" needs the field nullable in all its versions \"{}\", but nullableVersions is \"{}\"",
                f.versions, f.nullable_versions
            ),
        );
    }
}

/// Java's `Byte/Short/Integer/Long.valueOf(s, base)` after the generator's `0x` handling, then
/// the type's range. `None` when valid.
fn int(d: &str, min: i128, max: i128, ty: &str) -> Option<String> {
    if d.is_empty() {
        return None;
    }
    let (digits, radix) = match d.strip_prefix("0x") {
        Some(h) => (h, 16),
        None => (d, 10),
    };
    let Some(v) = java_parse_int(digits, radix) else {
        let how = if radix == 16 {
            "hexadecimal"
        } else {
            "decimal"
        };
        return Some(format!(
            "default {d:?} is not a {how} {ty} (hexadecimal needs a lower-case 0x prefix)"
        ));
    };
    if radix == 16 && digits.starts_with(['+', '-']) {
        // Accepted by valueOf, but the emitted Java literal `0x-1` does not compile.
        return Some(format!("default {d:?}: a sign cannot follow 0x"));
    }
    (v < min || v > max).then(|| format!("default {d:?} is out of range for {ty} ({min}..={max})"))
}

/// uint16/uint32 ranges (checked after parsing as a wider signed type).
fn unsigned(d: &str, max: i128, ty: &str) -> Option<String> {
    if d.is_empty() {
        return None;
    }
    let v = match d.strip_prefix("0x") {
        Some(h) => java_parse_int(h, 16),
        None => java_parse_int(d, 10),
    }?;
    (v < 0 || v > max).then(|| format!("default {d:?} is out of range for {ty} (0..={max})"))
}

/// Java's integer parsing: an optional sign, then at least one digit of the radix; no spaces.
fn java_parse_int(s: &str, radix: u32) -> Option<i128> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 40 || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// `0`-prefixed decimal digits (`010`, `-07`), not `0` itself and not hexadecimal.
fn leading_zero(d: &str) -> bool {
    let digits = d.trim_start_matches(['+', '-']);
    digits.len() > 1
        && digits.starts_with('0')
        && !d.starts_with("0x")
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// D3: base64url (padding optional, as Java's URL decoder) of at least 16 bytes.
fn uuid(d: &str) -> Option<String> {
    if d.is_empty() {
        return None;
    }
    let engine = GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    match engine.decode(d) {
        Ok(b) if b.len() >= 16 => None,
        Ok(b) => Some(format!("default {d:?} decodes to {} bytes; a uuid default needs 16 (22 base64url characters)", b.len())),
        Err(e) => Some(format!("default {d:?} is not base64url ({e}); a uuid default is written like H3KKO4NTRPaCWtEmm3vW7A")),
    }
}

/// Java's `Double.parseDouble`: surrounding whitespace trimmed, an optional `f`/`d` suffix,
/// `NaN`/`Infinity` spelled exactly, hexadecimal floats with a `p` exponent.
fn java_double(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c <= ' ');
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "NaN" || unsigned == "Infinity" {
        return true;
    }
    let body = unsigned
        .strip_suffix(['f', 'F', 'd', 'D'])
        .unwrap_or(unsigned);
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let Some((mant, exp)) = h.split_once(['p', 'P']) else {
            return false;
        };
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        let (a, b) = mant.split_once('.').unwrap_or((mant, ""));
        return !(a.is_empty() && b.is_empty())
            && a.chars().chain(b.chars()).all(|c| c.is_ascii_hexdigit())
            && !exp.is_empty()
            && exp.bytes().all(|c| c.is_ascii_digit());
    }
    // Rust's grammar matches Java's decimal one except for its own spellings of the specials.
    let lower = body.to_ascii_lowercase();
    if lower.contains("inf") || lower.contains("nan") {
        return false;
    }
    !body.is_empty() && body.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_integer_rules() {
        assert_eq!(int("-1", -128, 127, "int8"), None);
        assert_eq!(int("0x7f", -128, 127, "int8"), None);
        assert!(int("0xff", -128, 127, "int8").is_some());
        assert!(int("0X10", -128, 127, "int8").is_some());
        assert!(int("0x", -128, 127, "int8").is_some());
        assert!(int(" 1", -128, 127, "int8").is_some());
        assert!(int("1.0", -128, 127, "int8").is_some());
        assert!(unsigned("65536", 65_535, "uint16").is_some());
        assert!(unsigned("-1", 65_535, "uint16").is_some());
        assert_eq!(unsigned("65535", 65_535, "uint16"), None);
        assert!(
            leading_zero("010")
                && leading_zero("-07")
                && !leading_zero("0")
                && !leading_zero("0x10")
        );
    }

    #[test]
    fn java_double_rules() {
        for ok in [
            "1e3",
            "12.34",
            "-0.5",
            "NaN",
            "-Infinity",
            "1.0d",
            " 2 ",
            "0x1p3",
            ".5",
            "5.",
        ] {
            assert!(java_double(ok), "{ok}");
        }
        for bad in ["inf", "nan", "infinity", "1,5", "abc", "0x1", "e5", ""] {
            assert!(!java_double(bad), "{bad}");
        }
    }

    #[test]
    fn uuid_defaults() {
        assert_eq!(uuid("H3KKO4NTRPaCWtEmm3vW7A"), None);
        assert!(uuid("H3KKO4NTRPaCWtEmm3vW").is_some());
        assert!(uuid("H3KKO4NTRPaC+tEmm3vW7A").is_some());
    }
}
