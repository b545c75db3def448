//! BLAKE3 digests: per message, per prefix (the chain), per context and per
//! binding prefix (docs/fingerprint.md §4).
//!
//! Each purpose has its own key, derived from a versioned BLAKE3 `derive_key`
//! context, so a digest of one kind can never be mistaken for another and a new
//! fingerprint version never collides with an old one.

use std::sync::LazyLock;

use crate::model::{Context, Message, Origin};
use crate::{encode, lanes};

/// The fingerprint version. Any change to an encoding or a context string is a
/// new version; bindings carry it, so an old binding reads as a version mismatch.
pub const VERSION: u32 = 1;

pub type Digest = [u8; 32];

// The `derive_key` context strings, one per purpose (docs/fingerprint.md §4):
// the domain each kind of digest is separated into.
pub const MESSAGE_DOMAIN: &str = "thinkseal 2026-11-30 v1 message digest";
pub const CHAIN_DOMAIN: &str = "thinkseal 2026-11-30 v1 prefix chain";
pub const REQUEST_DOMAIN: &str = "thinkseal 2026-11-30 v1 request context";
pub const PREFIX_DOMAIN: &str = "thinkseal 2026-11-30 v1 binding prefix";

/// The chain value of the empty prefix.
pub const CHAIN_START: Digest = [0u8; 32];

fn key(context: &str) -> Digest {
    blake3::derive_key(context, b"")
}

static MESSAGE_KEY: LazyLock<Digest> = LazyLock::new(|| key(MESSAGE_DOMAIN));
static CHAIN_KEY: LazyLock<Digest> = LazyLock::new(|| key(CHAIN_DOMAIN));
static CONTEXT_KEY: LazyLock<Digest> = LazyLock::new(|| key(REQUEST_DOMAIN));
static PREFIX_KEY: LazyLock<Digest> = LazyLock::new(|| key(PREFIX_DOMAIN));

fn keyed(key: &Digest, bytes: &[u8]) -> Digest {
    *blake3::keyed_hash(key, bytes).as_bytes()
}

/// The digest of one message's canonical encoding. `scratch` is reused between
/// calls so a batch allocates once.
pub fn message_digest_with(scratch: &mut Vec<u8>, message: &Message) -> Digest {
    scratch.clear();
    encode::encode_message(scratch, message);
    digest_encoding(scratch)
}

/// The message digest of an already encoded message (see [`encode`]).
#[must_use]
pub fn digest_encoding(encoding: &[u8]) -> Digest {
    keyed(&MESSAGE_KEY, encoding)
}

/// Message digests of many encodings, `buffer[ends[i-1]..ends[i]]` each, split
/// across up to `threads` scoped threads when the batch is large enough.
#[must_use]
pub fn digest_encodings(buffer: &[u8], ends: &[usize], threads: usize) -> Vec<Digest> {
    let starts = std::iter::once(0).chain(ends.iter().copied());
    // The encodings' own bounds, made from `ends`.
    let inputs: Vec<&[u8]> = starts
        .zip(ends.iter().copied())
        .map(|(a, b)| &buffer[a..b])
        .collect();
    let threads = worth_threads(buffer.len(), threads);
    if threads == 1 {
        return lanes::keyed_hash_many(&MESSAGE_KEY, &inputs);
    }
    let per = inputs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = inputs
            .chunks(per)
            .map(|part| scope.spawn(move || lanes::keyed_hash_many(&MESSAGE_KEY, part)))
            .collect();
        parts
            .into_iter()
            .flat_map(|part| part.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Threads pay for themselves only past roughly 256 KB of input.
fn worth_threads(bytes: usize, threads: usize) -> usize {
    const MIN_BYTES_PER_THREAD: usize = 128 * 1024;
    threads.clamp(1, bytes.div_ceil(MIN_BYTES_PER_THREAD).max(1))
}

#[must_use]
pub fn message_digest(message: &Message) -> Digest {
    message_digest_with(&mut Vec::new(), message)
}

/// Digests of many messages, hashed on up to `threads` threads (the result is
/// the same either way).
#[must_use]
pub fn message_digests(messages: &[Message], threads: usize) -> Vec<Digest> {
    let mut buffer = Vec::new();
    let mut ends = Vec::with_capacity(messages.len());
    for m in messages {
        encode::encode_message(&mut buffer, m);
        ends.push(buffer.len());
    }
    digest_encodings(&buffer, &ends, threads)
}

/// One step of the prefix chain: the chain value after a message, from the
/// value before it and the message's (as-sent) digest.
#[must_use]
pub fn chain_step(before: &Digest, message: &Digest) -> Digest {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(before);
    block[32..].copy_from_slice(message);
    keyed(&CHAIN_KEY, &block)
}

/// Chain values after each of `digests`, starting from `start`.
#[must_use]
pub fn chain(start: &Digest, digests: &[Digest]) -> Vec<Digest> {
    let mut value = *start;
    digests
        .iter()
        .map(|d| {
            value = chain_step(&value, d);
            value
        })
        .collect()
}

#[must_use]
pub fn context_digest(context: &Context) -> Digest {
    let mut out = Vec::new();
    encode::encode_context(&mut out, context);
    keyed(&CONTEXT_KEY, &out)
}

/// The prefix half of a binding (the other half is the turn's own message digest).
#[must_use]
pub fn prefix_digest(
    version: u32,
    origin: &Origin,
    context_digest: &Digest,
    chain_before: &Digest,
) -> Digest {
    let mut out = Vec::with_capacity(prefix_room(origin));
    encode::encode_prefix(&mut out, version, origin, context_digest, chain_before);
    keyed(&PREFIX_KEY, &out)
}

/// Room for the whole prefix encoding of `origin` (a tag; four strings, the
/// version at most ten digits, each a tag and a length; two digests the
/// same), so its buffer is allocated once: grown from empty, it was
/// reallocated twice, 757 instructions a bound turn (callgrind).
fn prefix_room(origin: &Origin) -> usize {
    let text =
        origin.provider.len() + origin.model.len() + origin.account.as_deref().map_or(0, str::len);
    1 + 4 * 9 + 10 + text + 2 * (9 + 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;

    fn user(i: usize) -> Message {
        Message::User {
            content: format!("message {i}").into(),
        }
    }

    #[test]
    fn the_prefix_room_holds_the_longest_prefix_encoding() {
        for account in [None, Some("acct-é".to_string())] {
            let origin = Origin {
                provider: "anthropic".into(),
                model: "claude-x".into(),
                account,
            };
            let mut out = Vec::new();
            encode::encode_prefix(&mut out, u32::MAX, &origin, &[1; 32], &[2; 32]);
            assert!(
                out.len() <= prefix_room(&origin),
                "{} > {}",
                out.len(),
                prefix_room(&origin)
            );
        }
    }

    #[test]
    fn threaded_digests_equal_sequential() {
        let msgs: Vec<Message> = (0..1000).map(user).collect();
        assert_eq!(message_digests(&msgs, 1), message_digests(&msgs, 2));
        assert_eq!(message_digests(&msgs, 4), message_digests(&msgs, 1));
        assert_eq!(message_digests(&[], 2), Vec::<Digest>::new());
        // 600 KB of encodings: past the size from which threads are used.
        let long: Vec<Message> = (0..300)
            .map(|i| Message::User {
                content: format!("{i} {}", "x".repeat(2_000)).into(),
            })
            .collect();
        let alone: Vec<Digest> = long.iter().map(message_digest).collect();
        for threads in [1, 2, 3, 4] {
            assert_eq!(message_digests(&long, threads), alone, "{threads} threads");
        }
    }

    #[test]
    fn chain_is_prefix_stable() {
        let msgs: Vec<Message> = (0..10).map(user).collect();
        let ds = message_digests(&msgs, 1);
        let whole = chain(&CHAIN_START, &ds);
        let head = chain(&CHAIN_START, &ds[..4]);
        let tail = chain(&head[3], &ds[4..]);
        assert_eq!(&whole[..4], &head[..]);
        assert_eq!(&whole[4..], &tail[..]);
    }

    #[test]
    fn purposes_have_distinct_keys() {
        let keys = [*MESSAGE_KEY, *CHAIN_KEY, *CONTEXT_KEY, *PREFIX_KEY];
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                assert_ne!(keys[i], keys[j]);
            }
        }
    }
}
