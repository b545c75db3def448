//! Criterion benches of the core: per-message digest of a 1.6 KB message (the
//! floor of any per-prefix scheme), batch digests on 1 and 2 threads, keyed
//! BLAKE3 of 2,000 message-sized inputs through the lanes against one at a
//! time, the chain step, and the UTF-8 of UCS-2 text (the widest kernel this
//! CPU has) against the standard library's. The Python-side comparison
//! against a pure-Python chain lives in benches/ (pytest-benchmark).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use thinkseal_core::model::{Block, Message, Part, ToolCall};
use thinkseal_core::{digest, lanes, utf8};

/// A 1.6 KB assistant turn: thinking, text and one tool call.
fn turn(i: usize) -> Message {
    Message::Assistant {
        parts: vec![
            Part::Thinking(Block::Text {
                text: "t".repeat(700),
                signature: Some("s".repeat(300)),
            }),
            Part::Text(format!("{i} {}", "x".repeat(500))),
            Part::ToolCall(ToolCall {
                id: format!("toolu_{i}"),
                name: "lookup".into(),
                arguments_jcs: br#"{"query":"weather in paris","units":"metric"}"#.to_vec(),
            }),
        ],
    }
}

fn benches(c: &mut Criterion) {
    let one = turn(0);
    let mut group = c.benchmark_group("message_digest");
    group.throughput(Throughput::Elements(1));
    group.bench_function("1.6KB", |b| {
        b.iter(|| digest::message_digest(black_box(&one)));
    });
    group.finish();

    let batch: Vec<Message> = (0..10_000).map(turn).collect();
    let mut group = c.benchmark_group("message_digests_10k");
    group.throughput(Throughput::Elements(batch.len() as u64));
    for threads in [1, 2] {
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &t| {
            b.iter(|| digest::message_digests(black_box(&batch), t));
        });
    }
    group.finish();

    // 1.7-1.9 KB inputs: two chunks each, as the bench workload's encodings.
    let owned: Vec<Vec<u8>> = (0..2_000)
        .map(|i: usize| {
            (0..1_700 + i * 37 % 200)
                .map(|j| (j * 31 + i) as u8)
                .collect()
        })
        .collect();
    let inputs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let key = [7u8; 32];
    let mut group = c.benchmark_group("keyed_hash_2k_inputs");
    group.throughput(Throughput::Bytes(
        owned.iter().map(Vec::len).sum::<usize>() as u64
    ));
    group.bench_function("one at a time", |b| {
        b.iter(|| {
            black_box(&inputs)
                .iter()
                .map(|i| *blake3::keyed_hash(&key, i).as_bytes())
                .collect::<Vec<_>>()
        });
    });
    group.bench_function("lanes", |b| {
        b.iter(|| lanes::keyed_hash_many(&key, black_box(&inputs)));
    });
    group.finish();

    let digests = digest::message_digests(&batch, 2);
    let mut group = c.benchmark_group("chain_10k");
    group.throughput(Throughput::Elements(digests.len() as u64));
    group.bench_function("chain", |b| {
        b.iter(|| digest::chain(&digest::CHAIN_START, black_box(&digests)));
    });
    group.finish();

    // The cold fingerprint's user message (benches/compare.py: `NON_ASCII`
    // three times), 1,481 units.
    let text = format!(
        "demande 0: {}",
        "lörem ipsüm dolor sit ämet — 東京の天気 ".repeat(42)
    );
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut group = c.benchmark_group("utf8_of_ucs2_mixed_text");
    group.throughput(Throughput::Elements(units.len() as u64));
    group.bench_function("utf8::ucs2", |b| {
        let mut out = Vec::with_capacity(units.len() * 3 + 64);
        b.iter(|| {
            out.clear();
            utf8::ucs2(black_box(&units), &mut out).expect("no surrogate");
            out.len()
        });
    });
    group.bench_function("std String::from_utf16", |b| {
        b.iter(|| {
            String::from_utf16(black_box(&units))
                .expect("no surrogate")
                .len()
        });
    });
    group.finish();
}

criterion_group! {
    name = core;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(core);
