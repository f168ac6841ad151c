// Package nexmark generates the Nexmark benchmark's events: people,
// auctions and bids, by the reference rules (Apache Beam's generator, as
// the nexmark crate that RisingWave uses ports them; the rules are in
// peer-tests/nexmark/NEXMARK.md).
//
// Event number n is a function of n and the Config alone: its kind from
// n modulo the proportions (1:3:46), its time from n and the rate, its ids
// from the newest person and auction at n, and everything random from a
// generator seeded with the event id. So any split can generate any event,
// in any order, and event n is always the same event. The draws follow
// the Rust crate's exactly (rng.go): event 0 equals the person its own
// test expects, character for character. One value can differ: about one
// price in 7 000, where the reference's platform powf rounds differently
// (rng.go, price).
//
// AppendRow writes events as rows of the person, auction and bid tables in
// COPY text or CSV, so other systems can load the same events.
//
// This package is the generator only. The nexmark connector, which
// assigns splits to a source's actors and commits their offsets with each
// epoch, builds on it.
package nexmark
