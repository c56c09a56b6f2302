//! Where a table keeps its files, in the spelling the rules compare: canonical paths and
//! roots, a bucket's directory, an index file's path and a deletion vector's file.

use paimon::spec::IndexFileMeta;
use paimon::table::{DeletionFile, Table, TableCommit};

use super::limits::DELETION_VECTORS_INDEX_TYPE;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult};

/// A path in the one spelling the coordinator compares: a local `file:///x` URI is written
/// `file:/x` (the form Java's `Path` prints; the paimon crate's reader strips `file:/` from
/// both). Nothing else is rewritten: the reader treats the scheme case-sensitively and does
/// not resolve `.`, `..` or doubled slashes, so neither does the comparison.
pub(crate) fn canonical_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("file:///") {
        Some(rest) => format!("file:/{rest}").into(),
        None => path.into(),
    }
}

/// A configured root in the spelling the writers use: [`canonical_path`], with runs of `/`
/// in its path collapsed as the writers' path resolution does (the scheme's `//` and the
/// authority are kept).
pub(crate) fn canonical_root(root: &str) -> String {
    let root = canonical_path(root);
    let path_start = match root.find("://") {
        Some(i) => root[i + 3..].find('/').map_or(root.len(), |j| i + 3 + j),
        None => root
            .find(':')
            .filter(|i| !root[..*i].contains('/'))
            .map_or(0, |i| i + 1),
    };
    let (head, path) = root.split_at(path_start);
    let mut out = String::with_capacity(root.len());
    out.push_str(head);
    let mut previous_slash = false;
    for c in path.chars() {
        if !(c == '/' && previous_slash) {
            out.push(c);
        }
        previous_slash = c == '/';
    }
    out
}

/// The deletion file of data file `name` in `vectors` (a deletion-vector index file), where
/// the table keeps index files.
pub(crate) fn deletion_file(
    table: &Table,
    bucket_path: &str,
    index_file: &IndexFileMeta,
    name: &str,
) -> Option<DeletionFile> {
    if index_file.index_type != DELETION_VECTORS_INDEX_TYPE {
        return None;
    }
    let range = index_file.deletion_vectors_ranges.as_ref()?.get(name)?;
    let path = index_file_path(table, bucket_path, index_file);
    Some(DeletionFile::new(
        path,
        i64::from(range.offset),
        i64::from(range.length),
        range.cardinality,
    ))
}

/// Where the table keeps `index_file` of the bucket at `bucket_path`: its external path, the
/// bucket's directory (`index-file-in-data-file-dir`), or `<table>/index/`.
pub(crate) fn index_file_path(
    table: &Table,
    bucket_path: &str,
    index_file: &IndexFileMeta,
) -> String {
    let in_data_dir = table
        .schema()
        .options()
        .get("index-file-in-data-file-dir")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    match &index_file.external_path {
        Some(external) => external.clone(),
        None if in_data_dir => format!("{bucket_path}/{}", index_file.file_name),
        None => format!(
            "{}/index/{}",
            table.location().trim_end_matches('/'),
            index_file.file_name
        ),
    }
}

/// The directory of `bucket` in `partition`.
pub(crate) fn bucket_path(
    paths: &TableCommit,
    partition: &[u8],
    bucket: i32,
) -> CoordinatorResult<String> {
    let partition: &[u8] = if partition.is_empty() {
        &paimon::spec::EMPTY_SERIALIZED_ROW
    } else {
        partition
    };
    paths
        .bucket_path(partition, bucket)
        .map_err(|e| CoordinatorError::paimon("computing a bucket directory", e))
}
