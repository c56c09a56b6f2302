//! Memory of the per-file state the streamed commit's design keeps (docs/SCALE.md, "What is
//! kept per file"), with the data structures it names, for one commit of N files:
//!
//! - each file's leaf hash of the commit digest (32 bytes), sorted at the end as
//!   `commit_digest` sorts them;
//! - each file's added-file fingerprint (16 bytes);
//! - each file's name key (a 128-bit hash of its name and a 32-bit bucket id) in a
//!   `HashSet` with the standard library's keyed hasher.
//!
//! The values are pseudo-random (the structures' sizes do not depend on them). Run one size per
//! process, so no size reuses memory another freed:
//!
//! `streamed-state-memory N` prints
//! `streamed-state files=N rss_growth_mb=M bytes_per_file=B peak_rss_mb=P`.

use std::collections::HashSet;

use paimon_wire_bench::proc_status_kib;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let files: u64 = std::env::args()
        .nth(1)
        .ok_or("usage: streamed-state-memory FILES")?
        .parse()?;
    let before = proc_status_kib("VmRSS")?;
    let mut digest_leaves: Vec<[u8; 32]> = Vec::new();
    let mut fingerprints: Vec<u128> = Vec::new();
    let mut name_keys: HashSet<(u128, u32)> = HashSet::new();
    // A 128-bit linear congruential sequence: distinct values, no allocation of its own.
    let mut value: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834;
    for file in 0..files {
        value = value
            .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
            .wrapping_add(1);
        let mut leaf = [0u8; 32];
        leaf[..16].copy_from_slice(&value.to_le_bytes());
        leaf[16..].copy_from_slice(&value.rotate_left(64).to_le_bytes());
        digest_leaves.push(leaf);
        fingerprints.push(value.rotate_left(7));
        name_keys.insert((value, (file % 4096) as u32));
    }
    digest_leaves.sort_unstable();
    let growth = proc_status_kib("VmRSS")?.saturating_sub(before);
    if name_keys.len() as u64 != files || fingerprints.len() != digest_leaves.len() {
        return Err("the state lost a file".into());
    }
    println!(
        "streamed-state files={files} rss_growth_mb={} bytes_per_file={:.0} peak_rss_mb={}",
        growth / 1024,
        growth as f64 * 1024.0 / files.max(1) as f64,
        proc_status_kib("VmHWM")? / 1024
    );
    Ok(())
}
