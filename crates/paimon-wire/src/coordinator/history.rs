//! What the table's retained history references: every file an entry of any snapshot still
//! on disk, of any tag, or of any branch (and its tags) names.
//!
//! "Live" for the coordinator's safety rules means live in any of them, not only in the
//! latest snapshot:
//!
//! - a file a commit adds must not be referenced anywhere (rule `already-live`): a file a
//!   compaction removed is still read by older snapshots, tags and branches, and committing
//!   it again would make the coordinator and readers disagree about what is live (and let
//!   expiry delete a file the latest snapshot uses);
//! - `abort` deletes no file referenced anywhere, whatever partition or bucket a message
//!   claims for it.
//!
//! Data files are read for the touched buckets only (their names are unique within a
//! bucket directory); index files, which all live in `<table>/index/`, for the whole table.
//! Both ADD and DELETE entries count: a DELETE entry names a file an older snapshot still
//! reads. Each manifest list and manifest is read once, however many snapshots share it.

use std::collections::HashSet;

use paimon::spec::{IndexManifest, Manifest, ManifestList, Snapshot};
use paimon::table::{BranchManager, SnapshotManager, Table, TagManager};

use super::table_state::{bucket_key, BucketKey};

/// The files the retained history references.
#[derive(Debug, Default)]
pub(crate) struct Referenced {
    /// Data, changelog and extra-free data file names, per touched bucket.
    pub(crate) data: HashSet<(BucketKey, String)>,
    /// Index file names, table-wide.
    pub(crate) index: HashSet<String>,
}

/// The manifests already read, so a manifest shared by many snapshots is read once.
#[derive(Default)]
struct Seen {
    lists: HashSet<String>,
    manifests: HashSet<String>,
    index_manifests: HashSet<String>,
}

/// Reads what every retained snapshot, tag and branch of `table` references in the `touched`
/// buckets (data files) and anywhere (index files).
pub(crate) async fn referenced(
    table: &Table,
    touched: &HashSet<BucketKey>,
) -> paimon::Result<Referenced> {
    let partitioned = !table.schema().partition_keys().is_empty();
    let file_io = table.file_io();
    let main = table.snapshot_manager();
    let tags = TagManager::new(file_io.clone(), table.location().to_string());
    let mut scopes: Vec<(SnapshotManager, TagManager)> = vec![(main.clone(), tags.clone())];
    for branch in BranchManager::new(file_io.clone(), table.location().to_string())
        .list_all()
        .await?
    {
        scopes.push((main.with_branch(&branch), tags.with_branch(&branch)));
    }
    let mut referenced = Referenced::default();
    let mut seen = Seen::default();
    for (snapshots, tags) in &scopes {
        let mut retained: Vec<Snapshot> = snapshots.list_all().await?;
        retained.extend(tags.list_all().await?.into_iter().map(|(_, s)| s));
        for snapshot in &retained {
            // Manifests of every branch live in the table's own manifest directory.
            read_snapshot(
                &main,
                snapshot,
                partitioned,
                touched,
                &mut seen,
                &mut referenced,
            )
            .await?;
        }
    }
    Ok(referenced)
}

async fn read_snapshot(
    manifests: &SnapshotManager,
    snapshot: &Snapshot,
    partitioned: bool,
    touched: &HashSet<BucketKey>,
    seen: &mut Seen,
    referenced: &mut Referenced,
) -> paimon::Result<()> {
    let file_io = manifests.file_io();
    let lists = [
        Some(snapshot.base_manifest_list()),
        Some(snapshot.delta_manifest_list()),
        snapshot.changelog_manifest_list(),
    ];
    for list in lists.into_iter().flatten() {
        if !seen.lists.insert(list.to_string()) {
            continue;
        }
        for meta in ManifestList::read(file_io, &manifests.manifest_path(list)).await? {
            if !seen.manifests.insert(meta.file_name().to_string()) {
                continue;
            }
            let path = manifests.manifest_path(meta.file_name());
            for entry in Manifest::read(file_io, &path).await? {
                let key = bucket_key(partitioned, entry.partition(), entry.bucket());
                if touched.contains(&key) {
                    referenced
                        .data
                        .insert((key, entry.file().file_name.clone()));
                }
            }
        }
    }
    if let Some(index_manifest) = snapshot.index_manifest() {
        if seen.index_manifests.insert(index_manifest.to_string()) {
            let path = manifests.manifest_path(index_manifest);
            for entry in IndexManifest::read(file_io, &path).await? {
                referenced.index.insert(entry.index_file.file_name.clone());
            }
        }
    }
    Ok(())
}
