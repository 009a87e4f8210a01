//! Every integration test of the `grade` binary and of the engine as the binary uses it, in
//! one test binary: each file is a module, so the shared helpers compile once and one
//! executable links, where 28 separate test crates linked 28 times. A test that needs a
//! process of its own (global state, a signal, an allocator) belongs in a crate of its own.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed expectation is the test failing, with its message"
)]

mod common;
mod stand_in;

mod agent_verdicts;
mod calibrate;
mod ci_formats;
mod claude_code;
mod cli;
mod compare;
mod conformance;
mod diagnostics;
mod escaped_output;
mod everyday;
mod fidelity;
mod first_use;
mod hardening;
mod hardening_files;
mod langfuse;
mod langfuse_pipeline;
mod long_sessions;
mod mcp;
mod odd_lines;
mod panels;
mod plugins;
mod report;
mod rubric_authoring;
mod rubric_schema;
mod script_limits;
mod scripted_pack;
mod several_sources;
mod trajectories;
mod unending_inputs;
