//! Categories `specs` (the built-in protocol's own spec JSON, damaged, for `validate-schema`,
//! `--schemas` overlays, `apis` and `bundle`), `encode` (decoded-PDU JSON from `kinspect decode`
//! of the bundled captures and from the schema generator, damaged, for `kinspect encode`) and
//! `pipes` (every subcommand writing into a closed pipe or a full disk).

#[path = "../../tests/common/costly_spec.rs"]
mod costly_spec;
use crate::frames::frame;
use crate::mutate::{self, pick};
use crate::run::{Case, Out};
use crate::Ctx;
use costly_spec::costly_spec;
use kinspect::fuzzing::roundtrip::combos;
use kinspect::wire::sample::Rng;
use serde_json::{json, Value as J};

/// The built-in bundle's spec files, as Kafka writes them (the bundle's `path` and `@`
/// positions removed), newest release first, one per file name.
pub fn builtin_specs() -> Vec<(String, J)> {
    let text = include_str!("../../src/protocol/builtin.json");
    let b: J = serde_json::from_str(text).expect("the built-in bundle is JSON");
    let mut out: Vec<(String, J)> = Vec::new();
    for s in b["specs"].as_array().into_iter().flatten() {
        let name = s["path"]
            .as_str()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or("Spec.json")
            .to_string();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let mut s = s.clone();
        strip(&mut s);
        out.push((name, s));
    }
    out
}

fn strip(v: &mut J) {
    match v {
        J::Object(o) => {
            o.shift_remove("@");
            o.shift_remove("path");
            o.values_mut().for_each(strip);
        }
        J::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Every object under `fields` / `commonStructs`, as paths of indices (to pick one).
fn field_objects(v: &J, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    // Deeper than real specs go only after an earlier mutation nested them: stop there.
    if path.len() > 24 {
        return;
    }
    if let J::Object(o) = v {
        for key in ["fields", "commonStructs"] {
            if let Some(J::Array(a)) = o.get(key) {
                for (i, f) in a.iter().enumerate() {
                    path.push(key.to_string());
                    path.push(i.to_string());
                    out.push(path.clone());
                    field_objects(f, path, out);
                    path.pop();
                    path.pop();
                }
            }
        }
    }
}

fn at<'a>(v: &'a mut J, path: &[String]) -> &'a mut J {
    path.iter().fold(v, |v, k| match v {
        J::Array(a) => &mut a[k.parse::<usize>().expect("index")],
        J::Object(o) => o.get_mut(k).expect("member"),
        _ => unreachable!(),
    })
}

/// A spec-aware mutation: versions, types, tags, defaults, recursive structs.
fn spec_one(s: &mut J, rng: &mut Rng) {
    let mut paths = Vec::new();
    field_objects(s, &mut Vec::new(), &mut paths);
    let struct_name = if paths.is_empty() {
        None
    } else {
        let p = pick(rng, &paths).clone();
        at(s, &p)["name"].as_str().map(str::to_string)
    };
    let target: &mut J = if paths.is_empty() || rng.chance(5) {
        s
    } else {
        let p = pick(rng, &paths).clone();
        at(s, &p)
    };
    let Some(o) = target.as_object_mut() else {
        return;
    };
    let versions = [
        "0+",
        "none",
        "",
        "+",
        "-1+",
        "5-3",
        "0-2147483647",
        "0-32767",
        "32767+",
        "1.5+",
        "0-",
        "99999999999999999999+",
        "0-1-2",
        " 3+",
    ];
    match rng.below(11) {
        0 => {
            let k = *pick(
                rng,
                &[
                    "versions",
                    "validVersions",
                    "flexibleVersions",
                    "nullableVersions",
                    "taggedVersions",
                    "deprecatedVersions",
                    "latestVersionUnstable",
                ],
            );
            o.insert(k.into(), json!(pick(rng, &versions)));
        }
        1 => {
            let t = *pick(
                rng,
                &[
                    "[][]int32",
                    "[]",
                    "int33",
                    "string[]",
                    "[]NoSuchStruct",
                    "uint16",
                    "float64",
                    "records",
                    "bytes",
                    "[]records",
                    "bool",
                    "",
                    "\u{0}",
                    "[]int8",
                ],
            );
            o.insert("type".into(), json!(t));
        }
        2 => {
            // A struct that contains itself (directly, or through an array).
            if let Some(n) = &struct_name {
                let t = if rng.chance(2) {
                    format!("[]{n}")
                } else {
                    n.clone()
                };
                let f = json!({"name": "Again", "type": t, "versions": "0+"});
                match o.get_mut("fields") {
                    Some(J::Array(a)) => a.push(f),
                    _ => {
                        o.insert("fields".into(), json!([f]));
                    }
                }
            }
        }
        3 => {
            o.insert(
                "tag".into(),
                json!(pick(
                    rng,
                    &[
                        json!(-1),
                        json!(0),
                        json!(u32::MAX),
                        json!(1e20),
                        json!("0")
                    ]
                )),
            );
            o.insert("taggedVersions".into(), json!(pick(rng, &versions)));
        }
        4 => {
            o.insert(
                "default".into(),
                json!(pick(
                    rng,
                    &[
                        "null",
                        "0x7fffffffffffffffffff",
                        "-",
                        "1e999",
                        "true",
                        "",
                        "NaN",
                        "-9223372036854775809"
                    ]
                )),
            );
        }
        5 => {
            o.insert(
                "apiKey".into(),
                json!(pick(
                    rng,
                    &[
                        json!(-1),
                        json!(32768),
                        json!(0),
                        json!(i64::MAX),
                        json!("0"),
                        json!(1.5)
                    ]
                )),
            );
        }
        6 => {
            // Many copies of a field: duplicate names and tags.
            if let Some(J::Array(a)) = o.get_mut("fields") {
                if let Some(f) = a.first().cloned() {
                    let n = 1 + rng.below(300) as usize;
                    a.extend(std::iter::repeat_n(f, n));
                }
            }
        }
        7 => {
            o.insert(
                "name".into(),
                json!(pick(
                    rng,
                    &[
                        "",
                        "é",
                        "a b",
                        "X".repeat(10_000).as_str(),
                        "Produce",
                        "1abc"
                    ]
                )),
            );
        }
        8 => {
            // Nesting as deep as asked: fields inside fields.
            let depth = 1 + rng.below(3000) as usize;
            let mut f = json!({"name": "Leaf", "type": "int32", "versions": "0+"});
            for d in 0..depth {
                // Built by moving, not with `json!` (which would copy `f` at every level).
                let mut o = serde_json::Map::new();
                o.insert("name".into(), J::String(format!("S{d}")));
                o.insert("type".into(), J::String(format!("[]S{d}")));
                o.insert("versions".into(), J::String("0+".into()));
                o.insert("fields".into(), J::Array(vec![f]));
                f = J::Object(o);
            }
            match o.get_mut("fields") {
                Some(J::Array(a)) => a.push(f),
                _ => {
                    o.insert("fields".into(), json!([f]));
                }
            }
        }
        9 => {
            o.insert("mapKey".into(), json!(true));
            o.insert(
                "entityType".into(),
                json!(pick(rng, &["topicName", "unknownEntity", "", "brokerId"])),
            );
        }
        _ => {
            let mut v = J::Object(std::mem::take(o));
            mutate::json_one(&mut v, rng);
            *target = v;
        }
    }
}

fn to_text(v: &J, rng: &mut Rng) -> Vec<u8> {
    // Pretty-printing indents each line by its depth: quadratic for deep nesting.
    let mut t = if rng.chance(2) && mutate::size_depth(v).1 < 64 {
        serde_json::to_vec_pretty(v)
    } else {
        serde_json::to_vec(v)
    }
    .expect("serializable");
    if rng.chance(2) {
        t.splice(
            0..0,
            b"// Licensed to the Apache Software Foundation (ASF)\n/* a comment */\n"
                .iter()
                .copied(),
        );
    }
    t
}

pub fn specs_case(i: u64, rng: &mut Rng, ctx: &Ctx) -> Case {
    let n = *pick(rng, &[1usize, 1, 2, 2, 3, 8, 40]);
    let mut c = Case::new(String::new());
    let mut what = Vec::new();
    let mut originals = Vec::new();
    for k in 0..n {
        let (name, orig) = pick(rng, &ctx.specs);
        let mut s = orig.clone();
        let m = rng.below(4);
        for _ in 0..m {
            if rng.chance(3) {
                mutate::json_one(&mut s, rng);
            } else {
                spec_one(&mut s, rng);
            }
        }
        let mut text = to_text(&s, rng);
        // Repeated big structures can reach tens of MiB: keep inputs small (a cut-off spec).
        text.truncate(3 << 20);
        if m == 0 || rng.chance(6) {
            mutate::json_text(&mut text, rng);
        }
        what.push(format!("{name} ({m} mutations)"));
        let fname = if rng.chance(20) {
            format!("x{k}.json")
        } else {
            name.clone()
        };
        c.file(&format!("specs/{fname}"), text);
        originals.push((name.clone(), serde_json::to_vec(orig).expect("json")));
    }
    // One case in 16 links its spec folder back to itself and to the case folder above it,
    // which holds it: a walk that follows links without remembering where it has been never
    // ends. Chosen by index, drawing nothing from `rng`, so every other case stays as it was.
    if i % 16 == 5 {
        c.links.extend(
            [("specs/a", "."), ("specs/b", "."), ("specs/up", "..")]
                .map(|(n, t)| (n.to_string(), t.to_string())),
        );
        what.push("links back to . and ..".into());
    }
    let mut args: Vec<String> = Vec::new();
    match rng.below(9) {
        0..=2 => {
            args.extend(["validate-schema", "specs"].map(String::from));
            c.out = Out::Any;
        }
        3 | 4 => {
            args.extend(["validate-schema", "--format", "json", "specs"].map(String::from));
            c.out = Out::JsonDoc;
        }
        5 => {
            args.extend(
                [
                    "validate-schema",
                    "--release",
                    *pick(rng, &["3.9", "4.3"]),
                    "--baseline",
                ]
                .map(String::from),
            );
            if rng.chance(2) {
                args.push("builtin".into());
            } else {
                for (name, o) in originals {
                    c.file(&format!("base/{name}"), o);
                }
                args.push("base".into());
            }
            args.push("specs".into());
            c.out = Out::Any;
        }
        6 => {
            let (cap, bytes) = pick(rng, &ctx.caps);
            c.file(cap, bytes.clone());
            args.extend(["decode", "--schemas", "specs", "-f", "jsonl", cap].map(String::from));
            c.out = Out::Jsonl;
        }
        7 => {
            args.extend(["apis", "--schemas", "specs", "--format", "json"].map(String::from));
            c.out = Out::JsonDoc;
        }
        _ => {
            args.extend(
                ["bundle", "--release", "4.3.1=specs", "-o", "bundle.json"].map(String::from),
            );
            c.out = Out::Any;
        }
    }
    // One case in 16 (again by index, drawing nothing) compares with a baseline a pair of
    // specs made to be costly: 16 structs of 1,000 fields, in reverse order in the new one, each
    // field from a version of its own, at 1,024 versions. Compared version by version that was
    // a 1,000 × 1,000 alignment per struct per version, 25 s for this pair.
    if i % 16 == 9 {
        for (dir, reverse) in [("base", false), ("specs", true)] {
            c.file(
                &format!("{dir}/WideRequest.json"),
                costly_spec("WideRequest", reverse, true).into_bytes(),
            );
        }
        args = ["validate-schema", "--baseline", "base", "specs"]
            .map(String::from)
            .to_vec();
        c.out = Out::Any;
        what.push("a costly pair to compare with a baseline".into());
    }
    c.what = what.join(", ");
    c.args(args);
    c
}

pub fn encode_case(_i: u64, rng: &mut Rng, ctx: &Ctx) -> Case {
    let n = *pick(rng, &[1usize, 1, 1, 2, 5, 20]);
    let mut docs = Vec::new();
    let mut from = Vec::new();
    for _ in 0..n {
        let v = if rng.chance(2) && !ctx.decoded.is_empty() {
            from.push("capture");
            serde_json::from_str(pick(rng, &ctx.decoded).as_str()).unwrap_or(J::Null)
        } else {
            from.push("generated");
            frame(rng.below(combos().len() as u64) as usize, 1, rng).json
        };
        docs.push(v);
    }
    let mut muts = 0;
    for d in &mut docs {
        for _ in 0..rng.below(5) {
            mutate::json_one(d, rng);
            muts += 1;
        }
    }
    let as_array = rng.chance(4);
    let mut text = if as_array {
        serde_json::to_vec(&J::Array(docs)).expect("json")
    } else {
        let mut t = Vec::new();
        for d in &docs {
            t.extend(serde_json::to_vec(d).expect("json"));
            t.push(b'\n');
        }
        t
    };
    let damaged = rng.chance(6);
    if damaged {
        mutate::json_text(&mut text, rng);
    }
    let mut c = Case::new(format!(
        "{n} PDUs ({}), {muts} mutations{}{}",
        from.join(" "),
        if as_array { ", array" } else { "" },
        if damaged { ", text damaged" } else { "" }
    ));
    c.out = Out::Any;
    let mut args: Vec<String> = vec![
        "encode".into(),
        "-o".into(),
        pick(rng, &["hex", "raw"]).to_string(),
    ];
    if rng.chance(5) {
        args.push("-".into());
        c.stdin = Some("in.json".into());
    } else {
        args.push("in.json".into());
    }
    c.file("in.json", text).args(args);
    c
}

pub fn pipes_case(i: u64, rng: &mut Rng, ctx: &Ctx) -> Case {
    let (cap, bytes) = pick(rng, &ctx.caps).clone();
    let cmds: [&[&str]; 16] = [
        &["apis"],
        &["apis", "--format", "json"],
        &["apis", "Produce", "--version", "13"],
        &["apis", "Fetch"],
        &["decode", "-f", "jsonl", "CAP"],
        &["decode", "-f", "json", "CAP"],
        &["decode", "-f", "tree", "CAP"],
        &["decode", "-f", "summary", "CAP"],
        &["decode", "-f", "jsonl", "--annotate", "CAP"],
        &["stats", "CAP"],
        &["stats", "--format", "json", "CAP"],
        &["validate-schema"],
        &["validate-schema", "--format", "json"],
        &["encode", "-o", "hex", "in.json"],
        &["decode", "/nonexistent"],
        &["--help"],
    ];
    let cmd = cmds[(i % cmds.len() as u64) as usize];
    let mut c = Case::new(String::new());
    c.args(cmd.iter().map(|a| {
        if *a == "CAP" {
            cap.clone()
        } else {
            a.to_string()
        }
    }));
    if cmd.contains(&"CAP") {
        c.file(&cap, bytes);
    }
    if cmd.contains(&"in.json") {
        let mut t = Vec::new();
        for _ in 0..50 {
            t.extend_from_slice(pick(rng, &ctx.decoded).as_bytes());
            t.push(b'\n');
        }
        c.file("in.json", t);
    }
    if (cmd.contains(&"stats") || cmd.contains(&"decode")) && rng.chance(3) {
        c.env.push(("KINSPECT_THREADS", "1".into()));
    }
    c.out = if (i / cmds.len() as u64) % 3 == 2 {
        Out::Full
    } else {
        Out::Closed
    };
    c.close_stderr = cmd.contains(&"/nonexistent") || rng.chance(4);
    c.what = format!(
        "{} into {}{}",
        cmd.join(" "),
        if c.out == Out::Full {
            "/dev/full"
        } else {
            "a closed pipe"
        },
        if c.close_stderr {
            ", stderr closed"
        } else {
            ""
        }
    );
    c
}
