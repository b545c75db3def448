//! The seal ledger's keys and entry checks (docs/fingerprint.md §11).
//!
//! A ledger maps each sealed datum of a bound turn (a signature, redacted
//! data, an opaque item, a native block) to the binding of its turn, so the
//! binding can be found again from the data alone. It stores digests and
//! bindings only: the key is a keyed BLAKE3 hash of the datum scoped by
//! account, and each entry carries a check over its key and binding so that a
//! truncated or edited entry is noticed.

use std::sync::LazyLock;

use crate::digest::Digest;
use crate::encode::{put_opt_str, put_str};

pub const LEDGER_DATUM_DOMAIN: &str = "thinkseal 2026-12-02 v1 ledger datum";
pub const LEDGER_ENTRY_DOMAIN: &str = "thinkseal 2026-12-02 v1 ledger entry";

/// The record kind byte of a datum (`L`) and of an entry check (`E`).
const DATUM_KIND: u8 = b'L';
const ENTRY_KIND: u8 = b'E';

static DATUM_KEY: LazyLock<Digest> = LazyLock::new(|| blake3::derive_key(LEDGER_DATUM_DOMAIN, b""));

/// The kinds of sealed data, as written in the key record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A thinking block's signature.
    Signature,
    /// A redacted thinking block's data.
    Redacted,
    /// An opaque thinking block's data (with its provider).
    Opaque,
    /// A native block's JSON text (with its provider).
    Native,
}

impl Kind {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Signature => "signature",
            Self::Redacted => "redacted",
            Self::Opaque => "opaque",
            Self::Native => "native",
        }
    }

    /// The kind named `name`, as the bindings take it.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "signature" => Some(Self::Signature),
            "redacted" => Some(Self::Redacted),
            "opaque" => Some(Self::Opaque),
            "native" => Some(Self::Native),
            _ => None,
        }
    }
}

/// The record a datum's key is taken over: `L`, then the account (string or
/// absent; an empty account is absent), the kind's name, the provider (string
/// or absent: signatures and redacted data name none) and the datum.
pub fn encode_datum(
    out: &mut Vec<u8>,
    account: Option<&str>,
    kind: Kind,
    provider: Option<&str>,
    datum: &str,
) {
    out.push(DATUM_KIND);
    put_opt_str(out, account.filter(|a| !a.is_empty()));
    put_str(out, kind.name());
    put_opt_str(out, provider);
    put_str(out, datum);
}

/// The ledger key of one sealed datum.
#[must_use]
pub fn datum_key(account: Option<&str>, kind: Kind, provider: Option<&str>, datum: &str) -> Digest {
    let mut record = Vec::with_capacity(datum.len() + 64);
    encode_datum(&mut record, account, kind, provider, datum);
    *blake3::keyed_hash(&DATUM_KEY, &record).as_bytes()
}

/// The key of entry checks for a ledger whose secret is `secret` (empty: none).
#[must_use]
pub fn entry_key(secret: &[u8]) -> Digest {
    blake3::derive_key(LEDGER_ENTRY_DOMAIN, secret)
}

/// The check an entry carries: a keyed hash of `E`, its key (as a byte string)
/// and the binding's text (as a string).
#[must_use]
pub fn entry_check(entry_key: &Digest, key: &Digest, binding: &str) -> Digest {
    let mut record = Vec::with_capacity(binding.len() + 64);
    record.push(ENTRY_KIND);
    crate::encode::put_bytes(&mut record, key);
    put_str(&mut record, binding);
    *blake3::keyed_hash(entry_key, &record).as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_separates_keys() {
        let base = datum_key(Some("a"), Kind::Signature, None, "sig");
        assert_ne!(base, datum_key(None, Kind::Signature, None, "sig"));
        assert_ne!(base, datum_key(Some("b"), Kind::Signature, None, "sig"));
        assert_ne!(base, datum_key(Some("a"), Kind::Redacted, None, "sig"));
        assert_ne!(
            base,
            datum_key(Some("a"), Kind::Signature, Some("p"), "sig")
        );
        assert_ne!(base, datum_key(Some("a"), Kind::Signature, None, "sig2"));
        assert_eq!(
            datum_key(Some(""), Kind::Signature, None, "sig"),
            datum_key(None, Kind::Signature, None, "sig")
        );
    }

    #[test]
    fn checks_depend_on_secret_key_and_binding() {
        let key = datum_key(None, Kind::Native, Some("p"), "{}");
        let open = entry_key(b"");
        let check = entry_check(&open, &key, "b");
        assert_ne!(check, entry_check(&entry_key(b"s"), &key, "b"));
        assert_ne!(check, entry_check(&open, &key, "c"));
        assert_ne!(check, entry_check(&open, &[0u8; 32], "b"));
    }

    #[test]
    fn kind_names_round_trip() {
        for kind in [Kind::Signature, Kind::Redacted, Kind::Opaque, Kind::Native] {
            assert_eq!(Kind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(Kind::from_name("other"), None);
    }
}
