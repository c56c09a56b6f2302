//! Rule `compact-runs`: a primary-key table's compaction picks what Java's compaction
//! strategies pick, whole sorted runs from the newest down, and writes its results below every
//! run it leaves.
//!
//! A bucket of a primary-key table is an LSM tree. Each level-0 file is a sorted run of its
//! own, newest first (the highest sequence numbers); each level above 0 is one sorted run, and
//! a higher level holds older rows. Java's strategies (`UniversalCompaction`,
//! `ForceUpLevel0Compaction`, full compaction) all pick a prefix of that list: every level-0
//! file and the levels 1..k, each level whole, and write the result at a level below the first
//! run they leave (or at the top level when they take everything). The one exception is a full
//! compaction of a bucket that is a single run at the top level, which may rewrite some of its
//! files (those with deletion vectors or expired records) back to the top level.
//!
//! Any other pick breaks the order readers and later compactions rely on. Compacting files X
//! and B but not A, which sits between them, gives one result rows both newer and older than
//! A; a result that names sequence numbers for B's rows below A's makes A's older values win
//! again, and no check of the user columns can see it.
//!
//! What the rule checks, per bucket whose live files a compaction removes, against the live
//! files of the latest snapshot (their metadata is the table's, not the payload's):
//!
//! - a level above 0 is taken whole or not at all (except the single-top-run case above, whose
//!   results stay at the top level);
//! - no level above 0 is left while a higher one is taken;
//! - a level-0 file left is newer than every live file taken (its smallest sequence number is
//!   above their largest): a writer may flush new level-0 files while a compaction runs, and
//!   those are newer; an older one left is a gap in the prefix;
//! - every result (rewritten or upgraded in place) lies below every level above 0 that is left;
//! - a level above 0 stays one sorted run: the results at one level do not overlap each other's
//!   key ranges, nor those of the level's live files the compaction leaves (readers read a
//!   level's files one after the other, so two overlapping files at one level show a key's
//!   older value; the paimon crate's reader does).
//!
//! Files the same commit adds (`new_files`, level 0, the newest) may be taken or left.
//! Postpone tables compact across buckets and append tables have no sorted runs: both exempt.

use std::collections::{BTreeMap, HashMap, HashSet};

use paimon::spec::DataFileMeta;
use paimon::table::CommitMessage;

use super::shared::buckets::{bucket_key, bucket_name, BucketKey};
use super::shared::keys::{compare, Key, KeyType};
use super::shared::limits::BucketMode;
use super::shared::state::{refuse, TableState};
use super::shared::table_rules::TableRules;
use crate::coordinator::error::{CoordinatorResult, Rule};

/// What one bucket's compactions in the commit take and write.
struct BucketCompaction<'m> {
    /// The first message with a compaction of this bucket (blamed on a refusal).
    message: usize,
    /// The names of the files the compactions remove.
    taken: HashSet<&'m str>,
    /// The levels of the results (rewritten files and in-place upgrades).
    result_levels: Vec<i32>,
    /// The results themselves.
    results: Vec<&'m DataFileMeta>,
}

/// Checks rule `compact-runs` (see the module docs).
pub(crate) fn check_against_table(
    rules: &TableRules,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    if !rules.has_primary_keys() || rules.bucket_mode() == BucketMode::Postpone {
        return Ok(());
    }
    let mut buckets: HashMap<BucketKey, BucketCompaction> = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        if message.compact_before.is_empty() {
            continue;
        }
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let bucket = buckets.entry(key).or_insert_with(|| BucketCompaction {
            message: index,
            taken: HashSet::new(),
            result_levels: Vec::new(),
            results: Vec::new(),
        });
        bucket
            .taken
            .extend(message.compact_before.iter().map(|f| f.file_name.as_str()));
        bucket
            .result_levels
            .extend(message.compact_after.iter().map(|f| f.level));
        bucket.results.extend(&message.compact_after);
    }
    let mut ordered: Vec<_> = buckets.into_iter().collect();
    ordered.sort_by_key(|(_, bucket)| bucket.message);
    for (key, bucket) in ordered {
        check_bucket(state, &key, &bucket)?;
        check_levels_stay_sorted_runs(rules.key_type(), state, &key, &bucket)?;
    }
    Ok(())
}

/// A key range: its smallest and largest key.
type KeyRange = (Key, Key);

/// A file's key range, decoded (the rows were checked to be keys of the table, rule
/// `key-range`, before this runs; a range that does not decode is left to that rule).
fn key_range(keys: &KeyType, file: &DataFileMeta) -> Option<KeyRange> {
    Some((
        keys.decode(&file.min_key).ok()?,
        keys.decode(&file.max_key).ok()?,
    ))
}

/// Whether two key ranges share a key.
fn overlap(a: &KeyRange, b: &KeyRange) -> bool {
    use std::cmp::Ordering::Less;
    !(compare(&a.1, &b.0) == Some(Less) || compare(&b.1, &a.0) == Some(Less))
}

/// The results at one level above 0 overlap neither each other nor the live files the
/// compaction leaves at that level.
fn check_levels_stay_sorted_runs(
    keys: &KeyType,
    state: &TableState,
    key: &BucketKey,
    bucket: &BucketCompaction<'_>,
) -> CoordinatorResult<()> {
    let levels = live_levels(state, key);
    let taken = |file: &DataFileMeta| bucket.taken.contains(file.file_name.as_str());
    let mut at_level: BTreeMap<i32, Vec<(&DataFileMeta, KeyRange)>> = BTreeMap::new();
    for result in &bucket.results {
        if result.level == 0 {
            continue;
        }
        let Some(range) = key_range(keys, result) else {
            continue;
        };
        let placed = at_level.entry(result.level).or_default();
        let staying = levels
            .get(&result.level)
            .into_iter()
            .flatten()
            .filter(|f| !taken(f) && f.file_name != result.file_name);
        let clash = placed
            .iter()
            .map(|(file, range)| (*file, range.clone()))
            .chain(staying.filter_map(|f| Some((*f, key_range(keys, f)?))))
            .find(|(_, other)| overlap(&range, other));
        if let Some((other, _)) = clash {
            return Err(refuse(
                bucket.message,
                "compact_after".into(),
                Rule::CompactRuns,
                format!(
                    "the compaction puts {:?} at level {} of {}, where {:?} holds keys of its \
                     range: a level above 0 is one sorted run, its files' key ranges apart, \
                     and a reader of overlapping files at one level shows older values",
                    result.file_name,
                    result.level,
                    bucket_name(state.partitioned, key.1),
                    other.file_name
                ),
            ));
        }
        placed.push((result, range));
    }
    Ok(())
}

/// The live files of one bucket, by level: level 0's files, and each higher level's.
fn live_levels<'s>(state: &'s TableState, key: &BucketKey) -> BTreeMap<i32, Vec<&'s DataFileMeta>> {
    let mut levels: BTreeMap<i32, Vec<&DataFileMeta>> = BTreeMap::new();
    for entries in state
        .data
        .get(key)
        .into_iter()
        .flat_map(|files| files.values())
    {
        for entry in entries {
            levels.entry(entry.level).or_default().push(entry);
        }
    }
    levels
}

fn check_bucket(
    state: &TableState,
    key: &BucketKey,
    bucket: &BucketCompaction<'_>,
) -> CoordinatorResult<()> {
    let levels = live_levels(state, key);
    let where_ = || bucket_name(state.partitioned, key.1);
    let fail = |reason: String| {
        Err(refuse(
            bucket.message,
            "compact_before".into(),
            Rule::CompactRuns,
            reason,
        ))
    };
    let is_taken = |file: &DataFileMeta| bucket.taken.contains(file.file_name.as_str());
    let taken_live: Vec<&DataFileMeta> = levels
        .values()
        .flatten()
        .copied()
        .filter(|f| is_taken(f))
        .collect();
    if taken_live.is_empty() {
        return Ok(()); // only files of this commit are compacted
    }
    let top_level = levels.keys().next_back().copied().unwrap_or(0);
    let upper: Vec<(i32, &Vec<&DataFileMeta>)> = levels
        .iter()
        .filter(|(level, _)| **level > 0)
        .map(|(level, files)| (*level, files))
        .collect();
    // The single-top-run exception: the bucket's only live run above level 0 is at the top,
    // nothing else live is taken, and every result stays at that level.
    let single_top_run = upper.len() == 1
        && taken_live.iter().all(|f| f.level == top_level)
        && bucket.result_levels.iter().all(|l| *l == top_level);
    let mut lowest_left: Option<i32> = None;
    for (level, files) in &upper {
        let taken = files.iter().filter(|f| is_taken(f)).count();
        if taken > 0 && taken < files.len() && !single_top_run {
            let left = files.iter().find(|f| !is_taken(f)).map(|f| &f.file_name);
            return fail(format!(
                "the compaction takes {taken} of the {} files of level {level} in {}, leaving \
                 {left:?}: a sorted run above level 0 is compacted whole (Java's strategies \
                 take whole runs)",
                files.len(),
                where_()
            ));
        }
        if taken == 0 {
            lowest_left.get_or_insert(*level);
        } else if let Some(left) = lowest_left {
            return fail(format!(
                "the compaction takes level {level} of {} but leaves level {left} below it: a \
                 compaction takes the sorted runs from the newest down, so no run is skipped \
                 (the skipped run's rows would be both newer and older than the result's)",
                where_()
            ));
        }
    }
    let newest_taken = taken_live
        .iter()
        .map(|f| f.max_sequence_number)
        .max()
        .unwrap_or(i64::MIN);
    if let Some(older) = levels
        .get(&0)
        .into_iter()
        .flatten()
        .find(|f| !is_taken(f) && f.min_sequence_number <= newest_taken)
    {
        return fail(format!(
            "the compaction leaves level-0 file {:?} of {} (sequence numbers {}..{}) but takes \
             live files up to sequence number {newest_taken}: a level-0 file left by a \
             compaction must be newer than everything it takes",
            older.file_name,
            where_(),
            older.min_sequence_number,
            older.max_sequence_number
        ));
    }
    if let (Some(left), Some(highest)) = (lowest_left, bucket.result_levels.iter().max()) {
        if *highest >= left && !single_top_run {
            return fail(format!(
                "the compaction writes a result at level {highest} of {}, but leaves level \
                 {left}: results go below every run the compaction leaves, which holds older \
                 rows",
                where_()
            ));
        }
    }
    Ok(())
}
