//! Writes the W1 and W2 payloads at a version to a directory, for Java's harness to time on
//! the very same bytes: `write-workloads DIR [VERSION]` writes `DIR/w1-v<V>.bin` and
//! `DIR/w2-v<V>.bin`.

use std::path::PathBuf;

use paimon_wire::{serialize_list, SerializerVersion};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: write-workloads DIR [VERSION]")?);
    let version = match args.next() {
        Some(v) => SerializerVersion::try_from(v.parse::<i32>()?)?,
        None => SerializerVersion::V12,
    };
    std::fs::create_dir_all(&dir)?;
    for (name, messages) in [
        ("w1", paimon_wire_bench::w1()),
        ("w2", paimon_wire_bench::w2()),
    ] {
        let bytes = serialize_list(&messages, version)?;
        let path = dir.join(format!("{name}-v{version}.bin"));
        std::fs::write(&path, &bytes)?;
        println!("{} {} bytes", path.display(), bytes.len());
    }
    Ok(())
}
