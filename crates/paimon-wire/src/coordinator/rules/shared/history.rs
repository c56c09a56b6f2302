//! What the table's retained history references: every file an entry of any snapshot still
//! on disk, of any tag, or of any branch (and its tags) names — and, in the same pass, the
//! entries of the latest snapshot, from which [`crate::coordinator::rules::table_state`] computes what is live.
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
//! bucket directory; manifests whose bucket range misses every touched bucket are skipped);
//! index files, which all live in `<table>/index/`, for the whole table. Both ADD and DELETE
//! entries count: a DELETE entry names a file an older snapshot still reads. Each manifest
//! list and manifest is read once, however many snapshots share it, and of a branch's
//! snapshots only the earliest is read whole: every later snapshot's base is the earliest's
//! base plus the deltas since, so its delta (and changelog) lists name everything it adds.
//! Tags are read whole (a tag may be older than every retained snapshot). Changelogs a branch
//! keeps apart from its snapshots (`<branch>/changelog/changelog-N`, Java's
//! `ChangelogManager`, when `changelog.num-retained.*` outlives the snapshots) are read by
//! their delta and changelog lists.

use std::collections::{HashMap, HashSet};

use paimon::spec::{
    DataFileMeta, IndexManifest, IndexManifestEntry, Manifest, ManifestEntry, ManifestFileMeta,
    ManifestList, Snapshot,
};
use paimon::table::{BranchManager, SnapshotManager, Table, TagManager};

use super::buckets::{bucket_key, partition_key, BucketKey};

/// The files the retained history references.
#[derive(Debug, Default)]
pub(crate) struct Referenced {
    /// Data and changelog file names, per touched bucket.
    data: HashMap<BucketKey, HashSet<String>>,
    /// Index file names, table-wide.
    pub(crate) index: HashSet<String>,
}

impl Referenced {
    /// Whether a retained snapshot, tag or branch references data file `name` of `bucket`.
    /// The latest snapshot's live files are not in this set (see [`scan`]): ask the live
    /// state too.
    pub(crate) fn has_data(&self, bucket: &BucketKey, name: &str) -> bool {
        self.data
            .get(bucket)
            .is_some_and(|names| names.contains(name))
    }

    /// Every referenced data file of the touched buckets: (bucket, name).
    pub(crate) fn data_names(&self) -> impl Iterator<Item = (&BucketKey, &str)> {
        self.data
            .iter()
            .flat_map(|(bucket, names)| names.iter().map(move |name| (bucket, name.as_str())))
    }

    /// Records that data file `name` of `bucket` is referenced.
    pub(crate) fn add_data(&mut self, bucket: BucketKey, name: String) {
        self.data.entry(bucket).or_default().insert(name);
    }
}

/// A data file of the latest snapshot's manifests: (bucket, level, file name).
pub(crate) type LatestFile = (BucketKey, i32, String);

/// The latest snapshot's entries, as the same pass read them.
#[derive(Default)]
pub(crate) struct LatestEntries {
    /// Entries of its base and delta manifests in the touched buckets, netted as they are
    /// read: per file, ADD entries count +1 and DELETE entries -1, with the file of the last
    /// ADD entry.
    pub(crate) data: HashMap<LatestFile, (i32, Option<DataFileMeta>)>,
    /// Entries of its index manifest (the whole table).
    pub(crate) index: Vec<IndexManifestEntry>,
}

impl LatestEntries {
    fn add(&mut self, partitioned: bool, entry: ManifestEntry) {
        let add = *entry.kind() == paimon::spec::FileKind::Add;
        let (partition, bucket, _, file) = entry.into_parts();
        let key = bucket_key(partitioned, &partition, bucket);
        let slot = self
            .data
            .entry((key, file.level, file.file_name.clone()))
            .or_insert((0, None));
        if add {
            slot.0 += 1;
            slot.1 = Some(file);
        } else {
            slot.0 -= 1;
        }
    }
}

/// One pass over every manifest of the table's retained history.
struct Scan {
    manifests: SnapshotManager,
    partitioned: bool,
    /// The touched buckets by partition, looked up without allocating per entry.
    touched: HashMap<Vec<u8>, HashSet<i32>>,
    bucket_range: (i32, i32),
    lists: HashSet<String>,
    manifest_files: HashSet<String>,
    index_manifests: HashSet<String>,
    referenced: Referenced,
    latest: LatestEntries,
}

impl Scan {
    /// Whether a manifest may hold entries of a touched bucket.
    fn may_touch(&self, meta: &ManifestFileMeta) -> bool {
        match (meta.min_bucket(), meta.max_bucket()) {
            (Some(lo), Some(hi)) => hi >= self.bucket_range.0 && lo <= self.bucket_range.1,
            _ => true,
        }
    }

    /// Reads `snapshot`'s manifests: its base list only when `whole` (the latest snapshot,
    /// the earliest of a branch, a tag); entries of the base and delta lists go to
    /// [`LatestEntries`] when `latest`.
    async fn snapshot(
        &mut self,
        snapshot: &Snapshot,
        whole: bool,
        latest: bool,
    ) -> paimon::Result<()> {
        let file_io = self.manifests.file_io().clone();
        let lists = [
            (whole.then(|| snapshot.base_manifest_list()), latest),
            (Some(snapshot.delta_manifest_list()), latest),
            (snapshot.changelog_manifest_list(), false),
        ];
        for (list, live) in lists {
            let Some(list) = list else { continue };
            if !self.lists.insert(list.to_string()) {
                continue;
            }
            let metas = ManifestList::read(&file_io, &self.manifests.manifest_path(list)).await?;
            for meta in metas {
                if !self.may_touch(&meta) || !self.manifest_files.insert(meta.file_name().into()) {
                    continue;
                }
                let path = self.manifests.manifest_path(meta.file_name());
                for entry in Manifest::read(&file_io, &path).await? {
                    let partition = partition_key(self.partitioned, entry.partition());
                    let touched = self
                        .touched
                        .get(partition)
                        .is_some_and(|buckets| buckets.contains(&entry.bucket()));
                    if !touched {
                        continue;
                    }
                    if live {
                        // Its names reach the references through the live state (see
                        // `scan`), which adds those the latest snapshot nets out.
                        self.latest.add(self.partitioned, entry);
                    } else {
                        let key = bucket_key(self.partitioned, entry.partition(), entry.bucket());
                        let names = self.referenced.data.entry(key).or_default();
                        if !names.contains(entry.file().file_name.as_str()) {
                            names.insert(entry.file().file_name.clone());
                        }
                    }
                }
            }
        }
        if let Some(index_manifest) = snapshot.index_manifest() {
            if self.index_manifests.insert(index_manifest.to_string()) {
                let path = self.manifests.manifest_path(index_manifest);
                for entry in IndexManifest::read(&file_io, &path).await? {
                    self.referenced
                        .index
                        .insert(entry.index_file.file_name.clone());
                    if latest {
                        self.latest.index.push(entry);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Reads what every retained snapshot, tag and branch of `table` references in the `touched`
/// buckets (data files) and anywhere (index files), and the entries of `latest` (the main
/// branch's latest snapshot, read first) on the way. The data entries of `latest` are returned
/// in [`LatestEntries`] and not added to the references: the caller that asks for them computes
/// the live files from them and adds the names they do not keep live
/// ([`Referenced::add_data`]); without `latest`, every entry is a reference.
pub(crate) async fn scan(
    table: &Table,
    touched: &HashSet<BucketKey>,
    latest: Option<&Snapshot>,
) -> paimon::Result<(Referenced, LatestEntries)> {
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
    let buckets = touched.iter().map(|(_, bucket)| *bucket);
    let mut by_partition: HashMap<Vec<u8>, HashSet<i32>> = HashMap::new();
    for (partition, bucket) in touched {
        by_partition
            .entry(partition.clone())
            .or_default()
            .insert(*bucket);
    }
    let mut scan = Scan {
        // Manifests of every branch live in the table's own manifest directory.
        manifests: main,
        partitioned: !table.schema().partition_keys().is_empty(),
        touched: by_partition,
        bucket_range: (
            buckets.clone().min().unwrap_or(0),
            buckets.max().unwrap_or(0),
        ),
        lists: HashSet::new(),
        manifest_files: HashSet::new(),
        index_manifests: HashSet::new(),
        referenced: Referenced::default(),
        latest: LatestEntries::default(),
    };
    if let Some(latest) = latest {
        scan.snapshot(latest, true, true).await?;
    }
    for (snapshots, tags) in &scopes {
        let mut retained: Vec<Snapshot> = snapshots.list_all().await?;
        retained.sort_by_key(Snapshot::id);
        for (position, snapshot) in retained.iter().enumerate() {
            scan.snapshot(snapshot, position == 0, false).await?;
        }
        for (_, tagged) in tags.list_all().await? {
            scan.snapshot(&tagged, true, false).await?;
        }
        for changelog in separate_changelogs(file_io, &snapshots.snapshot_dir()).await? {
            scan.snapshot(&changelog, false, false).await?;
        }
    }
    Ok((scan.referenced, scan.latest))
}

/// The changelogs kept apart from the snapshots of the branch whose snapshot directory is
/// `snapshot_dir`: `changelog-N` files beside it, in the snapshot's JSON form.
async fn separate_changelogs(
    file_io: &paimon::io::FileIO,
    snapshot_dir: &str,
) -> paimon::Result<Vec<Snapshot>> {
    let branch = snapshot_dir
        .trim_end_matches('/')
        .rsplit_once('/')
        .map_or("", |(branch, _)| branch);
    let dir = format!("{branch}/changelog");
    if !file_io.exists(&dir).await? {
        return Ok(Vec::new());
    }
    let mut changelogs = Vec::new();
    for name in file_io.list_file_names(&dir).await? {
        let is_changelog = name
            .strip_prefix("changelog-")
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        if !is_changelog {
            continue;
        }
        let bytes = file_io.new_input(&format!("{dir}/{name}"))?.read().await?;
        let changelog: Snapshot =
            serde_json::from_slice(&bytes).map_err(|e| paimon::Error::DataInvalid {
                message: format!("changelog file {dir}/{name} is not a changelog: {e}"),
                source: Some(Box::new(e)),
            })?;
        changelogs.push(changelog);
    }
    Ok(changelogs)
}
