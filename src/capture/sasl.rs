//! SASL tokens that travel without Kafka headers (after SaslHandshake v0), and masking the
//! password of a PLAIN token for printing.

/// For a SASL PLAIN token (`[authzid] NUL authcid NUL passwd`, RFC 4616), returns a copy whose
/// password bytes are replaced by `*` (same length, so byte offsets in annotated output still
/// hold). Returns `None` when the token is not PLAIN-shaped (not exactly two NULs, or an empty
/// user name), so the caller shows it unchanged.
pub fn mask_sasl_plain(token: &[u8]) -> Option<Vec<u8>> {
    let mut nuls = token
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == 0)
        .map(|(i, _)| i);
    let first = nuls.next()?;
    let second = nuls.next()?;
    if nuls.next().is_some() || second == first + 1 {
        return None;
    }
    let mut out = token.to_vec();
    for b in out.iter_mut().skip(second + 1) {
        *b = b'*';
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_only_the_password() {
        assert_eq!(
            mask_sasl_plain(b"\0alice\0s3cret").as_deref(),
            Some(&b"\0alice\0******"[..])
        );
        assert_eq!(
            mask_sasl_plain(b"admin\0alice\0pw").as_deref(),
            Some(&b"admin\0alice\0**"[..])
        );
        // Empty password: nothing to hide, still PLAIN.
        assert_eq!(
            mask_sasl_plain(b"\0bob\0").as_deref(),
            Some(&b"\0bob\0"[..])
        );
    }

    #[test]
    fn refuses_what_is_not_plain() {
        assert_eq!(mask_sasl_plain(b"n,,n=user,r=abc"), None); // SCRAM client-first
        assert_eq!(mask_sasl_plain(b"a\0b\0c\0d"), None);
        assert_eq!(mask_sasl_plain(b"\0\0pw"), None);
        assert_eq!(mask_sasl_plain(b""), None);
    }
}
