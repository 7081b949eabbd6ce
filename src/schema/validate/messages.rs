//! Message-level rules (M1–M15 of `reference/kafka-generator-rules.md` §2, the ones the loader
//! leaves to the validator), release-aware, plus the checks of the proposed `headerVersions`.

use super::walk::Cx;
use crate::schema::json::JsonKind;
use crate::schema::model::{Pos, SpecType};
use crate::schema::versions::Versions;

pub fn check(cx: &mut Cx) {
    let spec = cx.spec;
    let empty = spec.valid_versions.is_empty();
    let is_4x = cx.release.is_4x();
    let rel = cx.release;

    // M9: the coordinator record types came with 4.0; 3.9 wrote those records as `data`.
    if !is_4x
        && matches!(
            spec.spec_type,
            SpecType::CoordinatorKey | SpecType::CoordinatorValue
        )
    {
        cx.error(
            "unsupported-spec-type",
            spec.prop_pos("type"),
            "type",
            format!(
                "type \"{}\" is not known to Kafka {rel}'s generator (it came with 4.0); 3.9 expects request, response, header, metadata or data",
                spec.spec_type.as_str()
            ),
        );
    }

    // M3: only 4.x knows a message without versions (an API removed but kept reserved).
    if empty && !is_4x {
        cx.error(
            "empty-valid-versions",
            spec.prop_pos("validVersions"),
            "validVersions",
            format!("validVersions is empty; Kafka {rel}'s generator needs at least one version (only 4.x accepts \"none\" for a removed API)"),
        );
    }

    // M4: flexibleVersions is required unless 4.x sees an empty message.
    if (!empty || !is_4x) && !has_value(cx, "flexibleVersions") {
        let why = if empty {
            " (3.9 requires it even when validVersions is empty)"
        } else {
            ""
        };
        cx.error(
            "missing-flexible-versions",
            spec.pos,
            "flexibleVersions",
            format!("flexibleVersions is required{why}: use \"0+\" for a new message, or \"none\""),
        );
    }

    // 4.x forces flexibleVersions, listeners and latestVersionUnstable off for an empty message
    // before checking them, so those checks only bite when there are versions.
    let forced_off = empty && is_4x;

    // M5
    let flex = spec.flexible_versions;
    if !forced_off && !flex.is_empty() && !flex.is_open_ended() {
        cx.error(
            "flexible-versions-not-open-ended",
            spec.prop_pos("flexibleVersions"),
            "flexibleVersions",
            format!(
                "flexibleVersions must be \"none\" or open-ended like \"{}+\", not \"{flex}\"",
                flex.lo
            ),
        );
    }

    // M6: checked while generating code, so not for empty messages.
    if !empty && spec.valid_versions.is_open_ended() {
        cx.error(
            "unbounded-valid-versions",
            spec.prop_pos("validVersions"),
            "validVersions",
            format!(
                "validVersions \"{}\" has no maximum version; write \"{}-N\" with N the newest version",
                spec.valid_versions, spec.valid_versions.lo
            ),
        );
    }

    // M7: the listener vocabulary, and where listeners may appear.
    check_listeners(cx, forced_off);

    // M8
    if !forced_off && spec.latest_version_unstable && spec.spec_type != SpecType::Request {
        cx.error(
            "unstable-not-request",
            spec.prop_pos("latestVersionUnstable"),
            "latestVersionUnstable",
            format!(
                "latestVersionUnstable is only allowed on requests (it marks the response's latest version too), not on a {}",
                spec.spec_type.as_str()
            ),
        );
    }

    // M10/M11/M14: apiKey.
    let needs_key = spec.spec_type.is_keyed();
    if needs_key && spec.api_key.is_none() && (is_4x || !is_coordinator(spec.spec_type)) {
        cx.error(
            "missing-api-key",
            spec.pos,
            "apiKey",
            format!("a {} spec needs an apiKey", spec.spec_type.as_str()),
        );
    }
    if let Some(k) = spec.api_key {
        if k < 0 {
            cx.warning(
                "negative-api-key",
                spec.prop_pos("apiKey"),
                "apiKey",
                format!("apiKey {k} is negative: the generator accepts it, but Kafka's own tests require API keys >= 0"),
            );
        }
    }
    if is_4x && spec.spec_type == SpecType::CoordinatorKey {
        if spec.valid_versions != Versions::exactly(0) {
            cx.error(
                "coordinator-key-versions",
                spec.prop_pos("validVersions"),
                "validVersions",
                format!(
                    "a coordinator-key must have validVersions \"0\", not \"{}\"",
                    spec.valid_versions
                ),
            );
        }
        if !flex.is_empty() {
            cx.error(
                "coordinator-key-flexible",
                spec.prop_pos("flexibleVersions"),
                "flexibleVersions",
                format!("a coordinator-key must have flexibleVersions \"none\", not \"{flex}\""),
            );
        }
    }

    // M15
    let suffix = match spec.spec_type {
        SpecType::Request => Some("Request"),
        SpecType::Response => Some("Response"),
        _ => None,
    };
    if let Some(suffix) = suffix {
        if !spec.name.ends_with(suffix) || spec.name.len() == suffix.len() {
            cx.error(
                "name-suffix",
                spec.prop_pos("name"),
                "name",
                format!(
                    "a {} must be named <Api>{suffix} (the API is named by stripping the suffix), not \"{}\"",
                    spec.spec_type.as_str(),
                    spec.name
                ),
            );
        }
    }

    // M12: accepted silently by Kafka, but a deprecation of versions that do not exist is a typo.
    let dep = spec.deprecated_versions;
    if !dep.is_empty() && !dep.is_subset_of(spec.valid_versions) {
        cx.warning(
            "deprecated-outside-valid",
            spec.prop_pos("deprecatedVersions"),
            "deprecatedVersions",
            format!(
                "deprecatedVersions \"{dep}\" goes beyond validVersions \"{}\"",
                spec.valid_versions
            ),
        );
    }

    check_header_versions(cx);
}

fn is_coordinator(t: SpecType) -> bool {
    matches!(t, SpecType::CoordinatorKey | SpecType::CoordinatorValue)
}

/// Whether the root gives `key` a value: Kafka only refuses a missing (or JSON null) one; a
/// blank string parses as the default, "none".
fn has_value(cx: &Cx, key: &str) -> bool {
    match cx.root_member(key) {
        Some(m) => !matches!(m.value.kind, JsonKind::Null),
        // Without the JSON (specs from the built-in bundle), the model's record of properties.
        None => cx.ast.is_none() && cx.spec.has_prop(key),
    }
}

fn check_listeners(cx: &mut Cx, forced_off: bool) {
    let spec = cx.spec;
    if spec.listeners.is_empty() {
        return;
    }
    if !forced_off && spec.spec_type != SpecType::Request {
        cx.error(
            "listeners-not-request",
            spec.prop_pos("listeners"),
            "listeners",
            format!(
                "listeners are only allowed on requests, not on a {}",
                spec.spec_type.as_str()
            ),
        );
    }
    if !cx.release.is_4x() {
        return;
    }
    // 4.x dropped ZooKeeper: `zkBroker` no longer parses, even on an empty message.
    let mut at: Vec<Pos> = Vec::new();
    if let Some(m) = cx.root_member("listeners") {
        match &m.value.kind {
            JsonKind::Array(items) => at.extend(
                items
                    .iter()
                    .filter(|i| i.as_str() == Some("zkBroker"))
                    .map(|i| i.pos),
            ),
            JsonKind::Str(s) if s == "zkBroker" => at.push(m.value.pos),
            _ => {}
        }
    } else if spec.listeners.iter().any(|l| &**l == "zkBroker") {
        at.push(spec.prop_pos("listeners"));
    }
    let rel = cx.release;
    for pos in at {
        cx.error(
            "unknown-listener",
            pos,
            "listeners",
            format!("listener \"zkBroker\" was removed in Kafka 4.0; {rel} accepts \"broker\" and \"controller\""),
        );
    }
}

/// `headerVersions` (proposed, not in any Kafka release yet): the message versions whose request
/// or response header is the flexible one (request header v2, response header v1); absent, it
/// is `flexibleVersions`, which is what Kafka derives today. It lets a spec state the
/// exceptions Kafka hard-codes in its generator (ApiVersionsResponse always uses response header
/// v0; 3.9's ControlledShutdown v0 used request header v0). Checked: only on requests and
/// responses, within validVersions, and within flexibleVersions (a flexible header on a
/// non-flexible body exists nowhere).
fn check_header_versions(cx: &mut Cx) {
    let spec = cx.spec;
    let Some(hv) = spec.header_versions else {
        return;
    };
    let pos = spec.prop_pos("headerVersions");
    let rel = cx.release;
    cx.info(
        "proposed-property",
        pos,
        "headerVersions",
        format!(
            "headerVersions is a proposed property: Kafka {rel}'s generator rejects it as unknown"
        ),
    );
    if !matches!(spec.spec_type, SpecType::Request | SpecType::Response) {
        cx.error(
            "header-versions-not-api",
            pos,
            "headerVersions",
            format!(
                "headerVersions only means something on a request or response, not on a {}",
                spec.spec_type.as_str()
            ),
        );
        return;
    }
    if !hv.is_subset_of(spec.valid_versions) {
        cx.error(
            "header-versions-outside-valid",
            pos,
            "headerVersions",
            format!(
                "headerVersions \"{hv}\" must lie within validVersions \"{}\"",
                spec.valid_versions
            ),
        );
    }
    if !hv.is_subset_of(spec.flexible_versions) {
        cx.warning(
            "header-versions-not-flexible",
            pos,
            "headerVersions",
            format!(
                "headerVersions \"{hv}\" asks for a flexible header on versions whose body is not flexible (flexibleVersions \"{}\")",
                spec.flexible_versions
            ),
        );
    }
}
