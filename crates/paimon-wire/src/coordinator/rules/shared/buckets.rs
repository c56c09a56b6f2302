//! The key of a bucket ([`BucketKey`]: partition bytes and bucket, with every spelling of
//! the empty partition as one key) and how errors name a bucket.

/// A partition and bucket, with every spelling of the empty partition as one key.
pub(crate) type BucketKey = (Vec<u8>, i32);

/// The key of `bucket` in `partition` (see [`partition_key`]).
pub(crate) fn bucket_key(partitioned: bool, partition: &[u8], bucket: i32) -> BucketKey {
    (partition_key(partitioned, partition).to_vec(), bucket)
}

/// The partition bytes that identify a message's partition: an unpartitioned table's
/// partition is written as empty bytes by some writers and as the empty binary row by
/// others; both are the one partition (empty).
pub(crate) fn partition_key(partitioned: bool, partition: &[u8]) -> &[u8] {
    if partitioned {
        partition
    } else {
        &[]
    }
}

/// `bucket B of its partition` (or `of the table`), for error messages.
pub(crate) fn bucket_name(partitioned: bool, bucket: i32) -> String {
    if partitioned {
        format!("bucket {bucket} of its partition")
    } else {
        format!("bucket {bucket} of the table")
    }
}
