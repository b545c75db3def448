//! The golden vectors of fingerprint version 1, shared with pytest
//! (tests/vectors/fingerprint-v1.json): the pure-Rust model must produce the
//! same bytes as the Python encoder.

use serde_json::Value;
use thinkseal_core::digest;
use thinkseal_core::encode;
use thinkseal_core::model::{Context, Origin};

mod common;

use common::{canonical, digest_from_hex, hex, message, s, tools, vector_file};

fn vectors() -> Value {
    vector_file("fingerprint-v1.json")
}

#[test]
fn version_and_contexts() {
    let v = vectors();
    assert_eq!(v["version"], u64::from(digest::VERSION));
    assert_eq!(v["contexts"]["message"], digest::MESSAGE_DOMAIN);
    assert_eq!(v["contexts"]["chain"], digest::CHAIN_DOMAIN);
    assert_eq!(v["contexts"]["context"], digest::REQUEST_DOMAIN);
    assert_eq!(v["contexts"]["prefix"], digest::PREFIX_DOMAIN);
}

#[test]
fn canonical_json() {
    for case in vectors()["jcs"].as_array().expect("jcs") {
        let input: Value =
            serde_json::from_str(case["input"].as_str().expect("input")).expect("input json");
        let got = String::from_utf8(canonical(&input)).expect("utf8");
        assert_eq!(
            got,
            case["canonical"].as_str().expect("canonical"),
            "input {}",
            case["input"]
        );
    }
}

#[test]
fn messages_and_chain() {
    let v = vectors();
    let mut digests = Vec::new();
    for case in v["messages"].as_array().expect("messages") {
        let m = message(&case["message"]);
        let mut encoding = Vec::new();
        encode::encode_message(&mut encoding, &m);
        assert_eq!(hex(&encoding), case["encoding"].as_str().expect("encoding"));
        let d = digest::message_digest(&m);
        assert_eq!(hex(&d), case["digest"].as_str().expect("digest"));
        digests.push(d);
    }
    let start = digest_from_hex(&v["chain"]["start"]);
    let chain: Vec<String> = digest::chain(&start, &digests)
        .iter()
        .map(|d| hex(d))
        .collect();
    let want: Vec<String> = v["chain"]["after_each_message"]
        .as_array()
        .expect("chain")
        .iter()
        .map(s)
        .collect();
    assert_eq!(chain, want);
}

#[test]
fn context_and_prefix() {
    let v = vectors();
    let ctx = &v["context"];
    let context = Context {
        system: ctx["system"]
            .as_array()
            .expect("system")
            .iter()
            .map(s)
            .collect(),
        tools: tools(&ctx["tools"]),
        response_format_jcs: Some(canonical(&ctx["response_format"])),
    };
    let context_digest = digest::context_digest(&context);
    assert_eq!(hex(&context_digest), s(&ctx["digest"]));
    assert_eq!(
        hex(&digest::context_digest(&Context::default())),
        s(&ctx["empty_digest"])
    );

    let pre = &v["prefix"];
    let origin = Origin {
        provider: s(&pre["origin"]["provider"]),
        model: s(&pre["origin"]["model"]),
        account: pre["origin"]["account"].as_str().map(str::to_owned),
    };
    let got = digest::prefix_digest(
        1,
        &origin,
        &context_digest,
        &digest_from_hex(&pre["chain_before"]),
    );
    assert_eq!(hex(&got), s(&pre["digest"]));
}

/// Content parts (tests/vectors/content-v1.json): images, documents, native
/// blocks; breakpoints are not encoded and a lone text part is a string.
#[test]
fn content_parts() {
    let file = vector_file("content-v1.json");
    let cases = file["messages"].as_array().expect("messages");
    assert!(cases.len() >= 8);
    for case in cases {
        let m = message(&case["message"]);
        let mut encoding = Vec::new();
        encode::encode_message(&mut encoding, &m);
        assert_eq!(hex(&encoding), s(&case["encoding"]), "{}", case["message"]);
        assert_eq!(hex(&digest::message_digest(&m)), s(&case["digest"]));
    }
}
