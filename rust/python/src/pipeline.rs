//! Digests of many Python messages: encoded under the GIL, hashed beside it.
//!
//! Encoding reads Python objects, so it runs on the calling thread with the
//! GIL held; hashing reads only the encoded bytes. Once the encodings pass
//! one batch, each full batch goes to a hashing thread while the next one is
//! encoded, so with two threads the hashing costs almost no time beyond the
//! encoding (measured in docs/performance.md). Shorter lists, the common case
//! after a few new turns, are hashed on the calling thread with no thread
//! started.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::{self, ScopedJoinHandle};

use pyo3::prelude::*;
use pyo3::types::PyList;
use thinkseal_core::digest::{self, Digest};

use crate::encode;

/// Bytes of encodings per batch for each hashing thread.
const BATCH_BYTES: usize = 128 * 1024;
/// Batches waiting for the hashing threads before the encoder waits for them.
const QUEUED_BATCHES: usize = 8;

/// Encodings of consecutive messages: one buffer, and where each message ends in it.
type Batch = (Vec<u8>, Vec<usize>);

/// The digest of every message in `messages`, in order, using up to `threads`
/// threads (the calling one encodes; the others hash).
pub fn message_digests(messages: &Bound<'_, PyList>, threads: usize) -> PyResult<Vec<Digest>> {
    let py = messages.py();
    let hashers = threads.saturating_sub(1);
    let batch_bytes = BATCH_BYTES.saturating_mul(hashers.max(1));
    thread::scope(|scope| {
        let mut started: Option<(SyncSender<Batch>, ScopedJoinHandle<'_, Vec<Digest>>)> = None;
        let mut buffer = Vec::new();
        let mut ends = Vec::new();
        let mut encoded = Ok(());
        for message in messages.iter() {
            if let Err(err) = encode::encode_message(&mut buffer, &message) {
                encoded = Err(err);
                break;
            }
            ends.push(buffer.len());
            if hashers > 0 && buffer.len() >= batch_bytes {
                let (send, _) = started.get_or_insert_with(|| {
                    let (send, receive) = sync_channel::<Batch>(QUEUED_BATCHES);
                    let hashing = scope.spawn(move || {
                        let mut out = Vec::new();
                        for (buffer, ends) in receive {
                            out.extend(digest::digest_encodings(&buffer, &ends, hashers));
                        }
                        out
                    });
                    (send, hashing)
                });
                // The hashing thread holds the receiver until every sender is gone.
                let _ = send.send((std::mem::take(&mut buffer), std::mem::take(&mut ends)));
            }
        }
        let Some((send, hashing)) = started else {
            encoded?;
            return Ok(py.detach(|| digest::digest_encodings(&buffer, &ends, 1)));
        };
        if encoded.is_ok() && !ends.is_empty() {
            let _ = send.send((buffer, ends));
        }
        drop(send);
        let digests = py
            .detach(|| hashing.join())
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        encoded.map(|()| digests)
    })
}
