//! A spec costly to compare with a baseline, for the `it` tests and the hostile campaign
//! (`examples/hostile`): 16 structs of 1,000 `int32` fields at versions `0-1023`.

/// The spec named `name` (apiKey 9000): each struct's fields in order, or `reverse`d (a
/// 1,000 × 1,000 alignment per struct when the two are compared); every field from version 0,
/// or from a version of its own when `starts` (1,024 runs of alike versions).
pub fn costly_spec(name: &str, reverse: bool, starts: bool) -> String {
    let mut structs = Vec::new();
    for s in 0..16usize {
        let mut order: Vec<usize> = (0..1000).collect();
        if reverse {
            order.reverse();
        }
        let fields: Vec<String> = order
            .iter()
            .map(|i| {
                let from = if starts { (i * 37 + s) % 1024 } else { 0 };
                format!("{{\"name\":\"F{i}\",\"type\":\"int32\",\"versions\":\"{from}+\"}}")
            })
            .collect();
        structs.push(format!(
            "{{\"name\":\"S{s}\",\"type\":\"[]T{s}\",\"versions\":\"0+\",\"fields\":[{}]}}",
            fields.join(",")
        ));
    }
    format!(
        "{{\"apiKey\":9000,\"type\":\"request\",\"name\":\"{name}\",\"validVersions\":\"0-1023\",\
         \"flexibleVersions\":\"none\",\"fields\":[{}]}}\n",
        structs.join(",\n")
    )
}
