//! Version ranges as Kafka's message specs write them: `N`, `A-B`, `A+`, `none`.
//!
//! Semantics follow Kafka's generator: numbers are Java shorts (0..=32767), `A+` is open-ended
//! up to `i16::MAX`, and a reversed range such as `2-1` is accepted and empty (the validator
//! lints it).

use std::fmt;

/// An inclusive range of versions. Empty when `lo > hi`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Versions {
    pub lo: i16,
    pub hi: i16,
}

/// Why a version string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionsError(pub String);

impl Versions {
    pub const NONE: Versions = Versions { lo: 1, hi: 0 };
    pub const ALL: Versions = Versions {
        lo: 0,
        hi: i16::MAX,
    };

    pub const fn new(lo: i16, hi: i16) -> Versions {
        Versions { lo, hi }
    }
    pub const fn exactly(v: i16) -> Versions {
        Versions { lo: v, hi: v }
    }
    pub const fn from(lo: i16) -> Versions {
        Versions { lo, hi: i16::MAX }
    }
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }
    pub fn contains(self, v: i16) -> bool {
        self.lo <= v && v <= self.hi
    }
    pub fn is_open_ended(self) -> bool {
        !self.is_empty() && self.hi == i16::MAX
    }
    pub fn intersect(self, o: Versions) -> Versions {
        let r = Versions {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        };
        if r.is_empty() {
            Versions::NONE
        } else {
            r
        }
    }
    /// True when every version of `self` is in `o` (an empty range is a subset of anything).
    pub fn is_subset_of(self, o: Versions) -> bool {
        self.is_empty() || (!o.is_empty() && o.lo <= self.lo && self.hi <= o.hi)
    }
    pub fn iter(self) -> impl Iterator<Item = i16> {
        let (lo, hi) = if self.is_empty() {
            (1, 0)
        } else {
            (self.lo, self.hi)
        };
        (lo as i32..=hi as i32).map(|v| v as i16)
    }

    /// Parses like Kafka's `Versions.parse`: the string is trimmed; empty means `default`.
    pub fn parse(input: &str, default: Option<Versions>) -> Result<Versions, VersionsError> {
        let s = input.trim();
        if s.is_empty() {
            return default.ok_or_else(|| VersionsError("empty version string".into()));
        }
        if s == "none" {
            return Ok(Versions::NONE);
        }
        if let Some(head) = s.strip_suffix('+') {
            return Ok(Versions::from(parse_short(head, s)?));
        }
        if let Some(dash) = s.find('-') {
            let lo = parse_short(&s[..dash], s)?;
            let hi = parse_short(&s[dash + 1..], s)?;
            // Kafka keeps a reversed range as written; it is simply empty.
            return Ok(Versions { lo, hi });
        }
        Ok(Versions::exactly(parse_short(s, s)?))
    }
}

/// Java's `Short.parseShort` restricted to non-negative values (Kafka rejects negatives).
fn parse_short(part: &str, whole: &str) -> Result<i16, VersionsError> {
    let digits = part.strip_prefix('+').unwrap_or(part);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VersionsError(format!(
            "invalid version string {whole:?}: {part:?} is not a non-negative number"
        )));
    }
    match digits.parse::<u32>() {
        Ok(n) if n <= i16::MAX as u32 => Ok(n as i16),
        _ => Err(VersionsError(format!(
            "invalid version string {whole:?}: {part:?} is out of range 0..=32767"
        ))),
    }
}

impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            f.write_str("none")
        } else if self.hi == i16::MAX {
            write!(f, "{}+", self.lo)
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

impl fmt::Debug for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(Versions::parse("3", None).unwrap(), Versions::exactly(3));
        assert_eq!(Versions::parse(" 0-2 ", None).unwrap(), Versions::new(0, 2));
        assert_eq!(Versions::parse("4+", None).unwrap(), Versions::from(4));
        assert!(Versions::parse("none", None).unwrap().is_empty());
        assert!(Versions::parse("2-1", None).unwrap().is_empty());
        assert_eq!(Versions::parse("+3", None).unwrap(), Versions::exactly(3));
        assert_eq!(
            Versions::parse("", Some(Versions::NONE)).unwrap(),
            Versions::NONE
        );
    }

    #[test]
    fn rejects_what_java_rejects() {
        for bad in ["0 - 2", "-1", "+", "40000", "1-", "a", "1.5", ""] {
            assert!(Versions::parse(bad, None).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn set_operations() {
        let a = Versions::new(0, 5);
        assert!(Versions::new(2, 3).is_subset_of(a));
        assert!(!Versions::from(2).is_subset_of(a));
        assert!(Versions::NONE.is_subset_of(a));
        assert_eq!(a.intersect(Versions::from(4)), Versions::new(4, 5));
        assert!(a.intersect(Versions::from(6)).is_empty());
        assert_eq!(
            Versions::new(1, 3).iter().collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert_eq!(Versions::NONE.iter().count(), 0);
    }
}
