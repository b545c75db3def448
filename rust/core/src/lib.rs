//! thinkseal-core: the bytes behind sealed-thinking bindings.
//!
//! - [`jcs`]: RFC 8785 canonical JSON.
//! - [`model`]: the hashed view of messages, tools and request context.
//! - [`encode`]: the canonical, injective byte encoding of that model.
//! - [`digest`]: versioned BLAKE3 digests and the per-prefix chain.
//! - [`lanes`]: keyed BLAKE3 of many short inputs at once, one per SIMD lane.
//! - [`ledger`]: the seal ledger's keys (sealed data scoped by account) and entry checks.
//! - [`fragment`]: the checks of a store's prepared fragments.
//! - [`parse`]: a strict JSON reader for stored conversations (a fast path
//!   that refuses what it is not sure of).
//! - `plain`: the scan for the bytes a JSON string escapes, shared by the writer and the reader.
//! - [`utf8`]: UTF-8 from the code units a Python `str` stores (Latin-1, UCS-2, UCS-4).
//! - [`wire`]: the compact JSON of request bodies (Python `json.dumps` bytes).
//! - [`spans`]: the byte spans of a request body's messages, for editing it in place.
//!
//! No Python here: the `thinkseal-python` crate walks Python objects into these types.

// `unsafe` is denied; the exceptions are four SIMD kernels, each a call into it
// once the CPU was seen to have its features and its unaligned loads (and, for
// UTF-8, stores): the BLAKE3 lanes (lanes.rs, AVX2, 64-byte blocks), the scan
// for bytes a JSON string escapes (plain.rs, AVX2, 32-byte blocks) and the
// transcoding of Latin-1 and UCS-2 text (utf8.rs: AVX2, 8-unit blocks, and
// AVX-512, 16-unit blocks).
#![deny(unsafe_code)]

pub mod digest;
pub mod encode;
pub mod fragment;
pub mod jcs;
pub mod lanes;
pub mod ledger;
pub mod model;
pub mod parse;
mod plain;
pub mod spans;
pub mod utf8;
pub mod wire;

pub use digest::{Digest, VERSION};
