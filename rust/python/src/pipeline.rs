//! Digests of many messages: encoded under the GIL, hashed beside it.
//!
//! Encoding reads Python objects, so it runs on the calling thread with the
//! GIL held; hashing reads only the encoded bytes. Once the encodings pass
//! one batch, each full batch goes to a hashing thread while the next one is
//! encoded, so with two threads the hashing costs almost no time beyond the
//! encoding (measured in docs/performance.md). Shorter lists, the common case
//! after a few new turns, are hashed on the calling thread with no thread
//! started. Asked for one thread, the calling thread hashes each batch as it
//! fills, while its bytes are still in the cache, and writes the next one over
//! it (the cold digests of 2,100 fresh non-ASCII messages took 2.31-2.37 us
//! a message when every encoding was kept to be hashed at the end, 2.11-2.15
//! this way). [`Hasher`] is that pipeline; `message_digests` and
//! `Conversation.from_json`'s reader (load.rs) feed it.

use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::{self, Scope, ScopedJoinHandle};

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

/// The hashing thread of a started [`Hasher`]: where full batches go, where
/// their buffers come back once hashed, and the thread (its digests).
struct Started<'scope> {
    batches: SyncSender<Batch>,
    hashed: Receiver<Vec<u8>>,
    thread: ScopedJoinHandle<'scope, Vec<Digest>>,
}

/// Message encodings written back to back into `buffer`, hashed a batch at a
/// time on other threads of `scope` once a batch is full, the rest when
/// [`Hasher::finish`] is called.
pub struct Hasher<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    hashers: usize,
    started: Option<Started<'scope>>,
    /// The encodings not handed over yet; a message's encoding is appended
    /// here, then [`Hasher::end`] is called (or it is truncated away).
    pub buffer: Vec<u8>,
    ends: Vec<usize>,
    /// With no hashing thread: the digests of the batches hashed so far.
    hashed: Vec<Digest>,
}

impl<'scope, 'env> Hasher<'scope, 'env> {
    /// A hasher using up to `threads` threads (the calling one encodes; the others hash).
    pub fn new(scope: &'scope Scope<'scope, 'env>, threads: usize) -> Self {
        Self {
            scope,
            hashers: threads.saturating_sub(1),
            started: None,
            buffer: Vec::new(),
            ends: Vec::new(),
            hashed: Vec::new(),
        }
    }

    /// One more message's encoding ends at the end of `buffer`; a full batch
    /// is handed to the hashing thread (started the first time).
    pub fn end(&mut self) {
        self.ends.push(self.buffer.len());
        if self.buffer.len() < BATCH_BYTES.saturating_mul(self.hashers.max(1)) {
            return;
        }
        if self.hashers == 0 {
            // One thread: the batch is hashed here while its bytes are still
            // in the cache, and the next one is written over it.
            let digests = digest::digest_encodings(&self.buffer, &self.ends, 1);
            self.hashed.extend(digests);
            self.buffer.clear();
            self.ends.clear();
            return;
        }
        let hashers = self.hashers;
        let started = self.started.get_or_insert_with(|| {
            let (batches, receive) = sync_channel::<Batch>(QUEUED_BATCHES);
            let (give_back, hashed) = channel::<Vec<u8>>();
            let thread = self.scope.spawn(move || {
                let mut out = Vec::new();
                for (buffer, ends) in receive {
                    out.extend(digest::digest_encodings(&buffer, &ends, hashers));
                    // Freed by the thread that made it (below); after the
                    // encoder's last batch nobody takes it, and it is freed here.
                    let _ = give_back.send(buffer);
                }
                out
            });
            Started {
                batches,
                hashed,
                thread,
            }
        });
        // A hashed batch's buffer is written again. A buffer freed on the
        // hashing thread would take the allocator's lock of the arena it came
        // from, against this thread's allocations (perf showed the two threads
        // waking each other through that lock).
        let next = match started.hashed.try_recv() {
            Ok(mut buffer) => {
                buffer.clear();
                buffer
            }
            Err(_) => Vec::with_capacity(self.buffer.capacity()),
        };
        let batch = (
            std::mem::replace(&mut self.buffer, next),
            std::mem::take(&mut self.ends),
        );
        // The hashing thread holds the receiver until every sender is gone.
        let _ = started.batches.send(batch);
    }

    /// The digest of every message ended, in order; what is left is hashed
    /// (and the hashing thread waited for) without the GIL.
    ///
    /// With a hashing thread, the last, partial batch is hashed on the calling
    /// thread while that thread ends its own. Measured reason: handing it
    /// over too, `from_json` of 1,000 bench messages waited 108-130 us here
    /// for its digests (min and median of 65, after a `gc.collect()` each,
    /// the peers imported), 45-84 this way; `from_json` + `prepare` took
    /// 4.57-4.60 us a message against 4.43-4.47 (three alternating runs).
    pub fn finish(self, py: Python<'_>) -> Vec<Digest> {
        let Some(Started {
            batches, thread, ..
        }) = self.started
        else {
            let (buffer, ends, threads) = (self.buffer, self.ends, self.hashers + 1);
            let mut hashed = self.hashed;
            hashed.extend(py.detach(|| digest::digest_encodings(&buffer, &ends, threads)));
            return hashed;
        };
        drop(batches);
        let (buffer, ends) = (self.buffer, self.ends);
        py.detach(|| {
            // The wait is the longer of the two hashings, not their sum.
            let last = digest::digest_encodings(&buffer, &ends, 1);
            let mut hashed = thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            hashed.extend(last);
            hashed
        })
    }
}

/// The digest of every message in `messages`, in order, using up to `threads`
/// threads (the calling one encodes; the others hash).
pub fn message_digests(messages: &Bound<'_, PyList>, threads: usize) -> PyResult<Vec<Digest>> {
    let py = messages.py();
    thread::scope(|scope| {
        let mut hasher = Hasher::new(scope, threads);
        for message in messages.iter() {
            // On an error the hasher is dropped: its thread ends with the scope.
            encode::encode_message(&mut hasher.buffer, &message)?;
            hasher.end();
        }
        Ok(hasher.finish(py))
    })
}
