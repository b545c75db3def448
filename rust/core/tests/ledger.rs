//! tests/vectors/ledger-v1.json, checked by a second implementation of
//! docs/fingerprint.md §11 written from the page (BLAKE3 directly, the
//! records spelled out byte by byte), and by the core's own functions.

use std::path::PathBuf;

use serde_json::Value;
use thinkseal_core::ledger::{self, Kind};

fn vector_file(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("vectors file"))
        .expect("vectors parse")
}

fn s(value: &Value) -> String {
    value.as_str().expect("a string").to_owned()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn string(out: &mut Vec<u8>, text: &str) {
    out.push(b's');
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(t) => string(out, t),
        None => out.push(b'n'),
    }
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn ledger_keys() {
    let file = vector_file("ledger-v1.json");
    assert_eq!(file["version"], 1);
    let key = blake3::derive_key("thinkseal 2026-12-02 v1 ledger datum", b"");
    for case in file["keys"].as_array().expect("keys") {
        let account = case["account"].as_str().filter(|a| !a.is_empty());
        let kind = s(&case["kind"]);
        let provider = case["provider"].as_str();
        let datum = s(&case["datum"]);
        let mut record = vec![b'L'];
        optional(&mut record, account);
        string(&mut record, &kind);
        optional(&mut record, provider);
        string(&mut record, &datum);
        let want = s(&case["key"]);
        assert_eq!(
            hex(blake3::keyed_hash(&key, &record).as_bytes()),
            want,
            "{kind} {datum}"
        );
        let core = ledger::datum_key(
            case["account"].as_str(),
            Kind::from_name(&kind).expect("kind"),
            provider,
            &datum,
        );
        assert_eq!(hex(&core), want, "core: {kind} {datum}");
    }
}

#[test]
fn ledger_entry_checks() {
    let file = vector_file("ledger-v1.json");
    for case in file["checks"].as_array().expect("checks") {
        let secret = unhex(&s(&case["secret"]));
        let entry_key = blake3::derive_key("thinkseal 2026-12-02 v1 ledger entry", &secret);
        assert_eq!(hex(&entry_key), s(&case["entry_key"]));
        let key = unhex(&s(&case["key"]));
        let binding = s(&case["binding"]);
        let mut record = vec![b'E', b'b'];
        record.extend_from_slice(&(key.len() as u64).to_le_bytes());
        record.extend_from_slice(&key);
        string(&mut record, &binding);
        let want = s(&case["check"]);
        assert_eq!(
            hex(blake3::keyed_hash(&entry_key, &record).as_bytes()),
            want
        );
        let key: [u8; 32] = key.try_into().expect("32 bytes");
        assert_eq!(
            hex(&ledger::entry_check(
                &ledger::entry_key(&secret),
                &key,
                &binding
            )),
            want
        );
    }
    assert!(matches!(file["checks"], Value::Array(ref a) if a.len() == 4));
}
