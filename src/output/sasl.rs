//! Masking secrets in SASL tokens before they are printed.

/// What a masked password is replaced with: fixed, so the output does not leak its length.
pub const MASK: &[u8] = b"********";

/// A SASL/PLAIN initial response (RFC 4616: `authzid NUL authcid NUL passwd`) with the password
/// replaced by [`MASK`]; `None` when the token is not PLAIN-shaped (SCRAM and OAUTHBEARER
/// messages are text without NUL bytes, GSSAPI tokens are binary and rarely hold exactly two
/// NULs followed by UTF-8).
pub fn mask_plain(token: &[u8]) -> Option<Vec<u8>> {
    let mut nuls = token
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == 0)
        .map(|(i, _)| i);
    let (_, second) = (nuls.next()?, nuls.next()?);
    if nuls.next().is_some() || std::str::from_utf8(token).is_err() {
        return None;
    }
    let mut out = token.get(..=second)?.to_vec();
    out.extend_from_slice(MASK);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_password_is_masked_whatever_its_length() {
        assert_eq!(
            mask_plain(b"\0alice\0s3cret").unwrap(),
            b"\0alice\0********"
        );
        assert_eq!(
            mask_plain(b"admin\0alice\0").unwrap(),
            b"admin\0alice\0********"
        );
    }

    #[test]
    fn other_mechanisms_are_left_alone() {
        assert_eq!(mask_plain(b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"), None);
        assert_eq!(mask_plain(b"\0only-one-nul"), None);
        assert_eq!(mask_plain(b"\0a\0b\0c"), None);
        assert_eq!(mask_plain(&[0, 0xff, 0, 1]), None);
    }
}
