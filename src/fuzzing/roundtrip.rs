//! Target `roundtrip`, structure-aware: the fuzzer's bytes choose an (api, version, direction)
//! of the built-in protocol and drive the schema-driven generator (`wire::sample::
//! from_unstructured`) to build a valid message with Kafka's header for that version. It is
//! encoded by `wire::encode`, decoded by `Decoder::decode_frame` as a capture would deliver it,
//! and must come back as the same JSON, from clean bytes whose spans cover every byte once,
//! encoding again to the same bytes.

use super::check;
use crate::output::value::pdu_json;
use crate::pdu::{Direction, Hints, Pdu};
use crate::protocol::{builtin, headers};
use crate::records::encode_pdu;
use crate::wire::decode::Decoder;
use crate::wire::plan::shared;
use crate::wire::sample::from_unstructured;
use arbitrary::Unstructured;
use serde_json::{json, Value as J};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Every (api key, version, direction) of the built-in protocol, in a stable order.
pub fn combos() -> &'static [(i16, i16, Direction)] {
    static ALL: OnceLock<Vec<(i16, i16, Direction)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let proto = builtin();
        let mut out = Vec::new();
        for key in proto.api_keys() {
            let versions: BTreeSet<i16> = proto
                .api_versions(key)
                .iter()
                .flat_map(|a| a.valid.iter())
                .collect();
            for v in versions {
                for dir in [Direction::Request, Direction::Response] {
                    if proto.message(key, v, dir).is_some() {
                        out.push((key, v, dir));
                    }
                }
            }
        }
        out
    })
}

thread_local! {
    // The generator fills `records` fields with arbitrary bytes, not batches: keep them opaque
    // (the `records` and `decode` targets exercise batch decoding).
    static DECODER: RefCell<(Decoder, Pdu)> = RefCell::new({
        let mut d = crate::records::decoder(builtin());
        d.set_records(crate::wire::decode::RecordsOptions { raw: true, ..Default::default() });
        (d, Pdu::default())
    });
}

pub fn roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let all = combos();
    let Ok(i) = u.choose_index(all.len()) else {
        return;
    };
    let (key, v, dir) = all[i];
    let proto = builtin();
    let (Some(hv), Some(r)) = (
        headers::header_version(proto, dir, key, v),
        proto.message(key, v, dir),
    ) else {
        panic!(
            "{key} v{v} {}: listed by the registry but not resolvable",
            dir.as_str()
        );
    };
    let Some(h) = proto.header(dir, hv) else {
        panic!("{} header v{hv} missing", dir.as_str());
    };
    let mut header = from_unstructured(&shared(h.spec, hv), &mut u);
    let body = from_unstructured(&shared(r.spec, v), &mut u);
    if dir == Direction::Request {
        header["RequestApiKey"] = key.into();
        header["RequestApiVersion"] = v.into();
    }
    let mut want = json!({"direction": dir.as_str(), "api_key": key, "api_version": v,
        "length": 0, "header": header, "body": body});
    let what = format!(
        "{} v{v} {}",
        proto.api_name(key).unwrap_or("?"),
        dir.as_str()
    );
    let bytes = match encode_pdu(proto, &want) {
        Ok(b) => b,
        Err(e) => panic!("{what}: the generator's message does not encode: {e}\n{want}"),
    };
    want["length"] = J::from(bytes.len() - 4);
    let hints = match dir {
        Direction::Request => Hints::default(),
        Direction::Response => Hints {
            api_key: Some(key),
            api_version: Some(v),
            ..Hints::default()
        },
    };
    DECODER.with(|d| {
        let (dec, pdu) = &mut *d.borrow_mut();
        dec.decode_frame(&bytes, &hints, pdu);
        let errors: Vec<String> = pdu.tree.errors().map(|d| d.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{what}: errors decoding what was encoded: {}\n bytes {}\n json {want}",
            errors.join("; "),
            check::hex(&bytes)
        );
        assert!(
            pdu.direction == Some(dir) && pdu.release == Some(r.release),
            "{what}: decoded as {:?} from release {:?}",
            pdu.direction,
            pdu.release
        );
        check::tree(&pdu.tree, &what);
        check::exact_cover(&pdu.tree);
        let got = pdu_json(pdu);
        assert!(
            got == want,
            "{what}: decoded\n {got}\nexpected\n {want}\n bytes {}",
            check::hex(&bytes)
        );
        check::reencodes(proto, pdu, &bytes);
        check::printers(pdu);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sample::Rng;

    /// Seeded inputs spread over the (api, version, direction) list, plus empty and short inputs
    /// (every choice the smallest): the `roundtrip` smoke set.
    #[test]
    fn smoke_roundtrip() {
        let all = combos();
        assert!(all.len() >= 700, "only {} combinations", all.len());
        let mut rng = Rng::new(0x726f_756e);
        for i in 0..all.len() {
            // The first two bytes pick the combination (`choose_index` over ~700 entries).
            let mut input = (i as u16).to_be_bytes().to_vec();
            input.extend((0..200).map(|_| rng.next_u64() as u8));
            roundtrip(&input);
        }
        roundtrip(&[]);
        roundtrip(&[7]);
    }
}
