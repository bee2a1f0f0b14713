//! Any bytes a client sends to the NBD server — the handshake, then transmission-phase
//! requests — must give replies, error replies or a closed connection, never a panic or an
//! allocation sized by the client beyond the stated limits.
//! Run with `cargo fuzz run nbd_session` from the repository root (docs/fuzzing.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    flashlab_serve::wire::replay_client_bytes(data);
});
