// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Integration tests for RESTCatalog.
//!
//! These tests use a mock server to verify the RESTCatalog behavior
//! through the Catalog trait interface.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, Int32Array, Int64Array, LargeBinaryArray, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowDataType, Field as ArrowField, Schema as ArrowSchema};
use axum::http::StatusCode;
use futures::TryStreamExt;
use paimon::api::ConfigResponse;
use paimon::api::{
    DataPolicy, ListPermissionsRequest, ListPoliciesRequest, PermissionAssignment,
    PermissionResource, PolicyType, RowFilter,
};
use paimon::catalog::{Catalog, Function, FunctionDefinition, Identifier, RESTCatalog, ViewSchema};
use paimon::common::Options;
use paimon::spec::{
    BigIntType, BlobType, BlobViewStruct, DataField, DataType, Datum, IntType, PartitionStatistics,
    PredicateBuilder, Schema, SchemaChange, VarCharType,
};
use paimon::{CatalogOptions, FileSystemCatalog, Table};

mod mock_server;
use mock_server::{start_mock_server, RESTServer};

/// Helper struct to hold test resources.
struct TestContext {
    server: RESTServer,
    catalog: RESTCatalog,
}

/// Helper function to set up a test environment with RESTCatalog.
async fn setup_catalog(initial_dbs: Vec<&str>) -> TestContext {
    let prefix = "mock-test";
    let mut defaults = HashMap::new();
    defaults.insert("prefix".to_string(), prefix.to_string());
    let config = ConfigResponse::new(defaults);

    let initial: Vec<String> = initial_dbs.iter().map(|s| s.to_string()).collect();
    let server = start_mock_server(
        "test_warehouse".to_string(),
        "/tmp/test_warehouse".to_string(),
        config,
        initial,
    )
    .await;

    let url = server.url().expect("Failed to get server URL");
    let mut options = Options::new();
    options.set("uri", &url);
    options.set("warehouse", "test_warehouse");
    options.set("token.provider", "bear");
    options.set("token", "test_token");

    let catalog = RESTCatalog::new(options, true)
        .await
        .expect("Failed to create RESTCatalog");

    TestContext { server, catalog }
}

/// Helper to build a simple test schema.
fn test_schema() -> Schema {
    Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .column("name", DataType::VarChar(VarCharType::new(255).unwrap()))
        .build()
        .expect("Failed to build schema")
}

/// A Parquet Format Table partitioned by `dt` whose partitions the catalog manages, unless
/// `options` says otherwise.
fn format_table_schema(options: &[(&str, &str)]) -> Schema {
    let mut builder = Schema::builder()
        .column("dt", DataType::VarChar(VarCharType::new(255).unwrap()))
        .column("id", DataType::BigInt(BigIntType::new()))
        .partition_keys(["dt"])
        .option("type", "format-table")
        .option("file.format", "parquet")
        .option("metastore.partitioned-table", "true");
    for (key, value) in options {
        builder = builder.option(*key, *value);
    }
    builder.build().unwrap()
}

/// Catalog-managed partitions require an internal table, and the mock serves external ones.
fn add_internal_table_with_schema(
    server: &RESTServer,
    table: &str,
    schema: Schema,
    location: &str,
) {
    server.add_table_with_schema("default", table, schema, location);
    server.set_table_external("default", table, false);
}

fn blob_schema(options: &[(&str, &str)]) -> Schema {
    let mut builder = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("name", DataType::VarChar(VarCharType::new(255).unwrap()))
        .column("picture", DataType::Blob(BlobType::new()))
        .option("data-evolution.enabled", "true")
        .option("row-tracking.enabled", "true");
    for (key, value) in options {
        builder = builder.option(*key, *value);
    }
    builder.build().expect("Failed to build blob schema")
}

fn blob_batch(ids: Vec<i32>, names: Vec<&str>, pictures: Vec<Vec<u8>>) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int32, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
        ArrowField::new("picture", ArrowDataType::LargeBinary, true),
    ]));
    let picture_refs = pictures
        .iter()
        .map(|bytes| Some(bytes.as_slice()))
        .collect::<Vec<_>>();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids)),
            Arc::new(StringArray::from(names)),
            Arc::new(LargeBinaryArray::from(picture_refs)),
        ],
    )
    .unwrap()
}

async fn write_batch(table: &Table, batch: RecordBatch, commit_user: &str) {
    let write_builder = table
        .new_write_builder()
        .with_commit_user(commit_user)
        .expect("valid commit user");
    let mut write = write_builder.new_write().expect("create writer");
    write.write_arrow_batch(&batch).await.expect("write batch");
    let messages = write.prepare_commit().await.expect("prepare commit");
    write_builder
        .new_commit()
        .commit(messages)
        .await
        .expect("commit batch");
}

fn collect_blob_rows(batches: &[RecordBatch]) -> Vec<(i32, String, Option<Vec<u8>>)> {
    let mut rows = Vec::new();
    for batch in batches {
        let ids = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        let names = batch
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        let pictures = batch
            .column(2)
            .as_any()
            .downcast_ref::<LargeBinaryArray>()
            .unwrap();
        for row in 0..batch.num_rows() {
            rows.push((
                ids.value(row),
                names.value(row).to_string(),
                if pictures.is_null(row) {
                    None
                } else {
                    Some(pictures.value(row).to_vec())
                },
            ));
        }
    }
    rows.sort_by_key(|(id, _, _)| *id);
    rows
}

// ==================== Partition Tests ====================

#[tokio::test]
async fn test_rest_catalog_skips_empty_and_batches_idempotent_create_partitions() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    let partition_specs = (0..1001)
        .map(|value| HashMap::from([("dt".to_string(), value.to_string())]))
        .collect::<Vec<_>>();

    ctx.catalog
        .create_partitions(&identifier, Vec::new(), false)
        .await
        .unwrap();
    ctx.catalog
        .create_partitions(&identifier, partition_specs.clone(), true)
        .await
        .unwrap();

    let calls = ctx.server.create_partitions_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].2.partition_specs, partition_specs[..1000]);
    assert_eq!(calls[1].2.partition_specs, partition_specs[1000..]);
    assert!(calls.iter().all(|(_, _, request)| request.ignore_if_exists));
}

#[tokio::test]
async fn test_rest_catalog_keeps_non_idempotent_create_in_one_request() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    let partition_specs = (0..2500)
        .map(|value| HashMap::from([("dt".to_string(), value.to_string())]))
        .collect::<Vec<_>>();

    ctx.catalog
        .create_partitions(&identifier, partition_specs.clone(), false)
        .await
        .unwrap();

    let calls = ctx.server.create_partitions_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].2.partition_specs, partition_specs);
    assert!(!calls[0].2.ignore_if_exists);
}

#[tokio::test]
async fn test_rest_catalog_sends_partition_statistics_with_their_batch() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    let specs = (0..1001)
        .map(|value| HashMap::from([("dt".to_string(), value.to_string())]))
        .collect::<Vec<_>>();
    let statistic = |spec: &HashMap<String, String>| PartitionStatistics {
        spec: spec.clone(),
        record_count: 1,
        file_size_in_bytes: 2,
        file_count: 3,
        last_file_creation_time: 4,
        total_buckets: -1,
    };

    // Reported for the last partition and the first, in that order.
    ctx.catalog
        .create_partitions_with_statistics(
            &identifier,
            specs.clone(),
            true,
            Some(vec![statistic(&specs[1000]), statistic(&specs[0])]),
            true,
        )
        .await
        .unwrap();

    let calls = ctx.server.create_partitions_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].2.partition_statistics,
        Some(vec![statistic(&specs[0])])
    );
    assert_eq!(
        calls[1].2.partition_statistics,
        Some(vec![statistic(&specs[1000])])
    );
    assert!(calls
        .iter()
        .all(|(_, _, request)| request.replace_statistics == Some(true)));

    // A report the catalog could not place is refused before anything is sent.
    let unknown = HashMap::from([("dt".to_string(), "x".to_string())]);
    for statistics in [
        vec![statistic(&unknown)],
        vec![statistic(&specs[0]), statistic(&specs[0])],
    ] {
        let error = ctx
            .catalog
            .create_partitions_with_statistics(
                &identifier,
                specs.clone(),
                true,
                Some(statistics),
                true,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(error, paimon::Error::DataInvalid { .. }),
            "{error}"
        );
    }
    assert_eq!(ctx.server.create_partitions_calls().len(), 2);
}

#[tokio::test]
async fn test_rest_catalog_refuses_a_partition_registered_twice_with_statistics() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    // The first and the last spec name the same partition, so they land in different batches.
    let mut specs = (0..1000)
        .map(|value| HashMap::from([("dt".to_string(), value.to_string())]))
        .collect::<Vec<_>>();
    specs.push(specs[0].clone());
    let additive = PartitionStatistics {
        spec: specs[0].clone(),
        record_count: 7,
        file_size_in_bytes: 70,
        file_count: 1,
        last_file_creation_time: 4,
        total_buckets: -1,
    };

    // Both batches would carry the one report, and an additive catalog would apply it twice.
    let error = ctx
        .catalog
        .create_partitions_with_statistics(
            &identifier,
            specs.clone(),
            true,
            Some(vec![additive]),
            false,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, paimon::Error::DataInvalid { message, .. } if message.contains("registered twice")),
        "{error}"
    );
    assert!(ctx.server.create_partitions_calls().is_empty());

    // Without statistics a repeated spec carries nothing that could be counted twice.
    ctx.catalog
        .create_partitions(&identifier, specs, true)
        .await
        .unwrap();
    assert_eq!(ctx.server.create_partitions_calls().len(), 2);
}

#[tokio::test]
async fn test_rest_catalog_maps_create_partition_conflict() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server
        .set_create_partitions_error_status(Some(StatusCode::CONFLICT));

    let error = ctx
        .catalog
        .create_partitions(
            &identifier,
            vec![HashMap::from([(
                "dt".to_string(),
                "2026-07-22".to_string(),
            )])],
            false,
        )
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DataInvalid { message, .. }
            if message.contains("default.managed_table")
                && message.contains("already exist")
    ));
}

#[tokio::test]
async fn test_rest_catalog_maps_invalid_partition_request() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server
        .set_create_partitions_error_status(Some(StatusCode::BAD_REQUEST));

    let error = ctx
        .catalog
        .create_partitions(
            &identifier,
            vec![HashMap::from([(
                "unknown".to_string(),
                "value".to_string(),
            )])],
            false,
        )
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DataInvalid { message, .. }
            if message.contains("default.managed_table")
    ));
}

#[tokio::test]
async fn test_rest_catalog_create_partitions_maps_missing_table() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "missing");

    let error = ctx
        .catalog
        .create_partitions(
            &identifier,
            vec![HashMap::from([(
                "dt".to_string(),
                "2026-07-22".to_string(),
            )])],
            false,
        )
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::TableNotExist { full_name } if full_name == "default.missing"
    ));
}

#[tokio::test]
async fn test_rest_catalog_drop_partitions_maps_missing_table() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "missing");

    let error = ctx
        .catalog
        .drop_partitions(
            &identifier,
            vec![HashMap::from([(
                "dt".to_string(),
                "2026-07-22".to_string(),
            )])],
        )
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::TableNotExist { full_name } if full_name == "default.missing"
    ));
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_rest_catalog_skips_empty_and_batches_drop_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    add_internal_table_with_schema(
        &ctx.server,
        "managed_table",
        format_table_schema(&[]),
        &format!("file://{}", tmp.path().display()),
    );
    let partition_specs = (0..1001)
        .map(|value| HashMap::from([("dt".to_string(), value.to_string())]))
        .collect::<Vec<_>>();
    ctx.server
        .set_table_partitions("default", "managed_table", partition_specs.clone());

    ctx.catalog
        .drop_partitions(&identifier, Vec::new())
        .await
        .unwrap();
    ctx.catalog
        .drop_partitions(&identifier, partition_specs.clone())
        .await
        .unwrap();

    let calls = ctx.server.drop_partitions_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].2.partition_specs, partition_specs[..1000]);
    assert_eq!(calls[1].2.partition_specs, partition_specs[1000..]);
    assert!(calls
        .iter()
        .all(|(_, _, request)| request.ignore_if_not_exists));
}

#[tokio::test]
async fn test_rest_catalog_refuses_to_drop_partitions_it_does_not_manage() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "paimon_table");
    let schema = Schema::builder()
        .column("dt", DataType::VarChar(VarCharType::new(255).unwrap()))
        .column("id", DataType::BigInt(BigIntType::new()))
        .partition_keys(["dt"])
        .build()
        .unwrap();
    ctx.server.add_table_with_schema(
        "default",
        "paimon_table",
        schema,
        "file:///tmp/test_warehouse/default.db/paimon_table",
    );

    // Unregistering would report success and leave every data file of a Paimon table in place.
    let error = ctx
        .catalog
        .drop_partitions(
            &identifier,
            vec![HashMap::from([(
                "dt".to_string(),
                "2026-07-22".to_string(),
            )])],
        )
        .await
        .unwrap_err();

    assert!(
        matches!(
            &error,
            paimon::Error::Unsupported { message } if message.contains("default.paimon_table")
        ),
        "{error}"
    );
    assert!(ctx.server.drop_partitions_calls().is_empty());
}

#[tokio::test]
async fn test_rest_catalog_looks_up_partitions_by_names_in_batches() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    let spec = |value: usize| HashMap::from([("dt".to_string(), value.to_string())]);
    let registered = (0..2500).step_by(2).map(spec).collect::<Vec<_>>();
    ctx.server
        .set_table_partitions("default", "managed_table", registered.clone());
    let requested = (0..2500).map(spec).collect::<Vec<_>>();

    assert!(ctx
        .catalog
        .list_partitions_by_names(&identifier, Vec::new())
        .await
        .unwrap()
        .is_empty());
    let found = ctx
        .catalog
        .list_partitions_by_names(&identifier, requested.clone())
        .await
        .unwrap();

    assert_eq!(
        found
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        registered
    );
    let calls = ctx
        .server
        .table_partition_list_by_names_calls("default", "managed_table");
    assert_eq!(
        calls.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![1000, 1000, 500]
    );
    assert_eq!(calls.concat(), requested);
}

#[tokio::test]
async fn test_rest_catalog_looks_up_partitions_by_names_through_the_listing_when_unsupported() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    let registered = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    let missing = HashMap::from([("dt".to_string(), "2026-07-23".to_string())]);
    ctx.server
        .set_table_partitions("default", "managed_table", vec![registered.clone()]);
    ctx.server
        .set_list_partitions_by_names_error_status(Some(StatusCode::NOT_IMPLEMENTED));

    let found = ctx
        .catalog
        .list_partitions_by_names(&identifier, vec![registered.clone(), missing])
        .await
        .unwrap();

    assert_eq!(
        found
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        vec![registered]
    );
    assert_eq!(
        ctx.server
            .table_partition_list_by_names_calls("default", "managed_table")
            .len(),
        1
    );
    assert_eq!(
        ctx.server
            .table_partition_list_name_patterns("default", "managed_table"),
        vec![None]
    );
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_rest_catalog_keeps_managed_partitions_off_the_filesystem_when_listing_is_unsupported()
{
    let tmp = tempfile::tempdir().unwrap();
    let partition_dir = tmp.path().join("dt=2026-07-22");
    std::fs::create_dir_all(&partition_dir).unwrap();
    std::fs::write(partition_dir.join("part-0.parquet"), b"listed, never read").unwrap();
    let location = format!("file://{}", tmp.path().display());
    let ctx = setup_catalog(vec!["default"]).await;
    add_internal_table_with_schema(
        &ctx.server,
        "managed_table",
        format_table_schema(&[]),
        &location,
    );
    add_internal_table_with_schema(
        &ctx.server,
        "unmanaged_table",
        format_table_schema(&[("metastore.partitioned-table", "false")]),
        &location,
    );
    ctx.server
        .set_list_partitions_error_status(Some(StatusCode::NOT_IMPLEMENTED));
    ctx.server
        .set_list_partitions_by_names_error_status(Some(StatusCode::NOT_IMPLEMENTED));
    let managed = Identifier::new("default", "managed_table");
    let partition = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    let is_not_implemented = |error: paimon::Error| {
        matches!(
            error,
            paimon::Error::RestApi {
                source: paimon::api::RestError::NotImplemented { .. }
            }
        )
    };

    // The directory is there, but it is not a registration of a catalog-managed table.
    assert!(is_not_implemented(
        ctx.catalog.list_partitions(&managed).await.unwrap_err()
    ));
    assert!(is_not_implemented(
        ctx.catalog
            .list_partitions_paged(&managed, None, None)
            .await
            .unwrap_err()
    ));
    assert!(is_not_implemented(
        ctx.catalog
            .list_partitions_by_names(&managed, vec![partition.clone()])
            .await
            .unwrap_err()
    ));

    // A table whose partitions the catalog does not manage still falls back to the file system
    // listing rather than failing.
    ctx.catalog
        .list_partitions(&Identifier::new("default", "unmanaged_table"))
        .await
        .unwrap();
}

// ==================== Database Tests ====================

#[tokio::test]
async fn test_catalog_list_databases() {
    let ctx = setup_catalog(vec!["default", "test_db1", "prod_db"]).await;

    let dbs = ctx.catalog.list_databases().await.unwrap();

    assert!(dbs.contains(&"default".to_string()));
    assert!(dbs.contains(&"test_db1".to_string()));
    assert!(dbs.contains(&"prod_db".to_string()));
}

#[tokio::test]
async fn test_catalog_create_database() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Create new database
    let result = ctx
        .catalog
        .create_database("new_db", false, HashMap::new())
        .await;
    assert!(result.is_ok(), "failed to create database: {result:?}");

    // Verify creation
    let dbs = ctx.catalog.list_databases().await.unwrap();
    assert!(dbs.contains(&"new_db".to_string()));
}

#[tokio::test]
async fn test_catalog_create_database_already_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Duplicate creation with ignore_if_exists=false should fail
    let result = ctx
        .catalog
        .create_database("default", false, HashMap::new())
        .await;
    assert!(
        result.is_err(),
        "creating duplicate database should fail when ignore_if_exists=false"
    );
}

#[tokio::test]
async fn test_catalog_create_database_ignore_if_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Duplicate creation with ignore_if_exists=true should succeed
    let result = ctx
        .catalog
        .create_database("default", true, HashMap::new())
        .await;
    assert!(
        result.is_ok(),
        "creating duplicate database should succeed when ignore_if_exists=true"
    );
}

#[tokio::test]
async fn test_catalog_drop_database() {
    let ctx = setup_catalog(vec!["default", "to_drop"]).await;

    // Verify database exists
    let dbs = ctx.catalog.list_databases().await.unwrap();
    assert!(dbs.contains(&"to_drop".to_string()));

    // Drop database (cascade=true to skip empty check)
    let result = ctx.catalog.drop_database("to_drop", false, true).await;
    assert!(result.is_ok(), "failed to drop database: {result:?}");

    // Verify database is gone
    let dbs = ctx.catalog.list_databases().await.unwrap();
    assert!(!dbs.contains(&"to_drop".to_string()));
}

#[tokio::test]
async fn test_catalog_drop_database_not_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Dropping non-existent database with ignore_if_not_exists=false should fail
    let result = ctx.catalog.drop_database("non_existent", false, true).await;
    assert!(
        result.is_err(),
        "dropping non-existent database should fail when ignore_if_not_exists=false"
    );
}

#[tokio::test]
async fn test_catalog_drop_database_ignore_if_not_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Dropping non-existent database with ignore_if_not_exists=true should succeed
    let result = ctx.catalog.drop_database("non_existent", true, true).await;
    assert!(
        result.is_ok(),
        "dropping non-existent database should succeed when ignore_if_not_exists=true"
    );
}

#[tokio::test]
async fn test_catalog_drop_database_not_empty_no_cascade() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table to the database
    ctx.server.add_table("default", "some_table");

    // Drop database with cascade=false should fail because it's not empty
    let result = ctx.catalog.drop_database("default", false, false).await;
    assert!(
        result.is_err(),
        "dropping non-empty database should fail when cascade=false"
    );
}

#[tokio::test]
async fn test_catalog_drop_database_not_empty_cascade() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table to the database
    ctx.server.add_table("default", "some_table");

    // Drop database with cascade=true should succeed
    let result = ctx.catalog.drop_database("default", false, true).await;
    assert!(
        result.is_ok(),
        "dropping non-empty database should succeed when cascade=true"
    );

    // Verify database is gone
    let dbs = ctx.catalog.list_databases().await.unwrap();
    assert!(!dbs.contains(&"default".to_string()));
}

// ==================== Table Tests ====================

#[tokio::test]
async fn test_catalog_list_tables() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add tables
    ctx.server.add_table("default", "table1");
    ctx.server.add_table("default", "table2");

    // List tables
    let tables = ctx.catalog.list_tables("default").await.unwrap();
    assert!(tables.contains(&"table1".to_string()));
    assert!(tables.contains(&"table2".to_string()));
}

#[tokio::test]
async fn test_catalog_list_tables_empty() {
    let ctx = setup_catalog(vec!["default"]).await;

    let tables = ctx.catalog.list_tables("default").await.unwrap();
    assert!(
        tables.is_empty(),
        "expected empty tables list, got: {tables:?}"
    );
}

#[tokio::test]
async fn test_catalog_get_table() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table with schema and path so get_table can build a Table object
    let schema = test_schema();
    ctx.server.add_table_with_schema(
        "default",
        "my_table",
        schema,
        "file:///tmp/test_warehouse/default.db/my_table",
    );

    let identifier = Identifier::new("default", "my_table");
    let table = ctx.catalog.get_table(&identifier).await;
    assert!(table.is_ok(), "failed to get table: {table:?}");
}

#[tokio::test]
async fn test_rest_env_get_table_reuses_catalog_environment() {
    let ctx = setup_catalog(vec!["default"]).await;

    ctx.server.add_table_with_schema(
        "default",
        "current_table",
        test_schema(),
        "file:///tmp/test_warehouse/default.db/current_table",
    );
    ctx.server.add_table_with_schema(
        "default",
        "upstream_table",
        test_schema(),
        "file:///tmp/test_warehouse/default.db/upstream_table",
    );

    let current = ctx
        .catalog
        .get_table(&Identifier::new("default", "current_table"))
        .await
        .expect("current table should load");
    let upstream = current
        .rest_env()
        .expect("REST table should carry RESTEnv")
        .get_table(&Identifier::new("default", "upstream_table"))
        .await
        .expect("upstream table should load via RESTEnv");

    assert_eq!(upstream.identifier().full_name(), "default.upstream_table");
    assert!(upstream.rest_env().is_some());
}

// This regression uses FileSystemCatalog to write real table files before reading
// them back through RESTCatalog. FileSystemCatalog directory listing is skipped
// on Windows elsewhere for the same opendal `fs` StripPrefixError.
#[cfg(not(windows))]
#[tokio::test]
async fn test_blob_view_limit_only_resolves_selected_references() {
    let tmp = tempfile::tempdir().unwrap();
    let warehouse = format!("file://{}", tmp.path().display());

    let mut fs_options = Options::new();
    fs_options.set(CatalogOptions::WAREHOUSE, &warehouse);
    let fs_catalog = FileSystemCatalog::new(fs_options).expect("create filesystem catalog");
    fs_catalog
        .create_database("default", true, HashMap::new())
        .await
        .unwrap();

    let source_id = Identifier::new("default", "blob_source");
    let source_schema = blob_schema(&[]);
    fs_catalog
        .create_table(&source_id, source_schema.clone(), false)
        .await
        .unwrap();
    let source = fs_catalog.get_table(&source_id).await.unwrap();
    write_batch(
        &source,
        blob_batch(
            vec![1, 2],
            vec!["Alice", "Bob"],
            vec![b"alice".to_vec(), b"bob".to_vec()],
        ),
        "source-writer",
    )
    .await;

    let view_id = Identifier::new("default", "blob_view_target");
    let view_schema = blob_schema(&[("blob-view-field", "picture"), ("read.batch-size", "1")]);
    fs_catalog
        .create_table(&view_id, view_schema.clone(), false)
        .await
        .unwrap();
    let view = fs_catalog.get_table(&view_id).await.unwrap();

    let picture_field_id = source
        .schema()
        .fields()
        .iter()
        .find(|field| field.name() == "picture")
        .unwrap()
        .id();
    let kept_ref = BlobViewStruct::new(source_id.clone(), picture_field_id, 1)
        .serialize()
        .unwrap();
    let filtered_out_bad_ref = BlobViewStruct::new(source_id.clone(), picture_field_id, 99)
        .serialize()
        .unwrap();
    write_batch(
        &view,
        blob_batch(
            vec![1, 2, 3, 4],
            vec!["Kept", "Repeated", "Repeated again", "Filtered"],
            vec![
                kept_ref.clone(),
                kept_ref.clone(),
                kept_ref,
                filtered_out_bad_ref,
            ],
        ),
        "view-writer",
    )
    .await;

    let prefix = "mock-test";
    let mut defaults = HashMap::new();
    defaults.insert("prefix".to_string(), prefix.to_string());
    let server = start_mock_server(
        "test_warehouse".to_string(),
        warehouse.clone(),
        ConfigResponse::new(defaults),
        vec!["default".to_string()],
    )
    .await;
    server.add_table_with_schema("default", "blob_source", source_schema, source.location());
    server.add_table_with_schema("default", "blob_view_target", view_schema, view.location());

    let url = server.url().expect("Failed to get server URL");
    let mut rest_options = Options::new();
    rest_options.set("uri", &url);
    rest_options.set("warehouse", "test_warehouse");
    rest_options.set("token.provider", "bear");
    rest_options.set("token", "test_token");
    let rest_catalog = RESTCatalog::new(rest_options, true)
        .await
        .expect("create rest catalog");

    let rest_view = rest_catalog.get_table(&view_id).await.unwrap();
    let predicate = PredicateBuilder::new(rest_view.schema().fields())
        .equal("id", Datum::Int(1))
        .unwrap();
    let mut read_builder = rest_view.new_read_builder();
    read_builder.with_filter(predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();
    let read = read_builder.new_read().unwrap();
    let batches = read
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();

    assert_eq!(
        collect_blob_rows(&batches),
        vec![(1, "Kept".to_string(), Some(b"bob".to_vec()))]
    );

    // LIMIT alone must not resolve the invalid reference in the fourth row.
    // The repeated reference is read from the lookup cache in a later batch.
    let mut limited_builder = rest_view.new_read_builder();
    limited_builder.with_limit(2);
    let limited_plan = limited_builder.new_scan().plan().await.unwrap();
    let limited = limited_builder
        .new_read()
        .unwrap()
        .to_arrow(limited_plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(
        collect_blob_rows(&limited),
        vec![
            (1, "Kept".to_string(), Some(b"bob".to_vec())),
            (2, "Repeated".to_string(), Some(b"bob".to_vec())),
        ]
    );

    // A predicate on the resolved view needs candidate lookups. With batches
    // of two, the final batch must not resolve the invalid fourth reference
    // after the third match reaches LIMIT.
    let predicate_view = rest_view.copy_with_options(HashMap::from([(
        "read.batch-size".to_string(),
        "2".to_string(),
    )]));
    let mut filtered_builder = predicate_view.new_read_builder();
    filtered_builder.with_limit(3);
    filtered_builder.with_filter(
        PredicateBuilder::new(predicate_view.schema().fields())
            .is_not_null("picture")
            .unwrap(),
    );
    let filtered_plan = filtered_builder.new_scan().plan().await.unwrap();
    let filtered = filtered_builder
        .new_read()
        .unwrap()
        .to_arrow(filtered_plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(
        collect_blob_rows(&filtered),
        vec![
            (1, "Kept".to_string(), Some(b"bob".to_vec())),
            (2, "Repeated".to_string(), Some(b"bob".to_vec())),
            (3, "Repeated again".to_string(), Some(b"bob".to_vec())),
        ]
    );

    // Partial files force the multi-provider merge and its View prescan.
    // The invalid, unmatched reference must be copied without resolving it.
    let replacement = BlobViewStruct::new(source_id, picture_field_id, 0)
        .serialize()
        .unwrap();
    let builder = view.new_write_builder();
    let update = builder.new_update().unwrap();
    let batch = RecordBatch::try_from_iter(vec![
        (
            "_ROW_ID",
            Arc::new(Int64Array::from(vec![0, 1])) as Arc<dyn Array>,
        ),
        (
            "picture",
            Arc::new(LargeBinaryArray::from(vec![
                Some(replacement.as_slice()),
                None,
            ])) as Arc<dyn Array>,
        ),
    ])
    .unwrap();
    let messages = update
        .update_by_arrow_with_row_id(vec![batch])
        .await
        .unwrap();
    builder.new_commit().commit(messages).await.unwrap();

    let batch = RecordBatch::try_from_iter(vec![
        (
            "_ROW_ID",
            Arc::new(Int64Array::from(vec![0])) as Arc<dyn Array>,
        ),
        (
            "name",
            Arc::new(StringArray::from(vec!["Updated"])) as Arc<dyn Array>,
        ),
    ])
    .unwrap();
    let messages = update
        .update_by_arrow_with_row_id(vec![batch])
        .await
        .unwrap();
    builder.new_commit().commit(messages).await.unwrap();

    let mut builder = rest_view.new_read_builder();
    builder.with_limit(3);
    let plan = builder.new_scan().plan().await.unwrap();
    let batches = builder
        .new_read()
        .unwrap()
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(
        collect_blob_rows(&batches),
        vec![
            (1, "Updated".to_string(), Some(b"alice".to_vec())),
            (2, "Repeated".to_string(), None),
            (3, "Repeated again".to_string(), Some(b"bob".to_vec())),
        ]
    );
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_rest_catalog_reads_format_table_with_bearer_and_local_file_dlf_auth() {
    use parquet::arrow::ArrowWriter;
    use std::fs::File;

    let tmp = tempfile::tempdir().unwrap();
    let format_path = format!("file://{}", tmp.path().display());

    let arrow_schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int64, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        arrow_schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec!["alice", "bob"])),
        ],
    )
    .unwrap();
    let file = File::create(tmp.path().join("part-0.parquet")).unwrap();
    let mut writer = ArrowWriter::try_new(file, arrow_schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .column("name", DataType::VarChar(VarCharType::new(255).unwrap()))
        .option("type", "format-table")
        .option("file.format", "parquet")
        .build()
        .unwrap();
    let identifier = Identifier::new("default", "format_users");
    ctx.server
        .add_table_with_schema("default", "format_users", schema, &format_path);

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    assert_eq!(table.location(), format_path);
    assert_eq!(table.schema().options().get("path"), Some(&format_path));
    assert!(table.new_write_builder().new_write().is_ok());

    let read_builder = table.new_read_builder();
    let plan = read_builder.new_scan().plan().await.unwrap();
    assert_eq!(plan.splits().len(), 1);

    let read = read_builder.new_read().unwrap();
    let batches = read
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(batches.len(), 1);

    let ids = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let names = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(ids.values(), &[1, 2]);
    assert_eq!(names.value(0), "alice");
    assert_eq!(names.value(1), "bob");

    let mut limited_builder = table.new_read_builder();
    limited_builder.with_limit(1);
    let limited_plan = limited_builder.new_scan().plan().await.unwrap();
    let limited_read = limited_builder.new_read().unwrap();
    let limited_batches = limited_read
        .to_arrow(limited_plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(
        limited_batches
            .iter()
            .map(|batch| batch.num_rows())
            .sum::<usize>(),
        1
    );

    let token_path = tmp.path().join("dlf-token.json");
    tokio::fs::write(
        &token_path,
        r#"{"AccessKeyId":"test-ak","AccessKeySecret":"test-sk","SecurityToken":"test-sts"}"#,
    )
    .await
    .unwrap();
    let mut dlf_options = Options::new();
    dlf_options.set(CatalogOptions::URI, ctx.server.url().unwrap());
    dlf_options.set(CatalogOptions::WAREHOUSE, "test_warehouse");
    dlf_options.set(CatalogOptions::TOKEN_PROVIDER, "dlf");
    dlf_options.set(CatalogOptions::DLF_REGION, "cn-hangzhou");
    dlf_options.set(CatalogOptions::DLF_TOKEN_LOADER, "local_file");
    dlf_options.set(
        CatalogOptions::DLF_TOKEN_PATH,
        token_path.display().to_string(),
    );
    let dlf_catalog = RESTCatalog::new(dlf_options, true).await.unwrap();
    let dlf_table = dlf_catalog.get_table(&identifier).await.unwrap();
    let dlf_builder = dlf_table.new_read_builder();
    let dlf_plan = dlf_builder.new_scan().plan().await.unwrap();
    let dlf_batches = dlf_builder
        .new_read()
        .unwrap()
        .to_arrow(dlf_plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(
        dlf_batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        2
    );
}

#[tokio::test]
async fn test_rest_catalog_validates_dynamic_managed_partition_options() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "managed_format");
    add_internal_table_with_schema(
        &ctx.server,
        "managed_format",
        schema,
        "memory:/managed_format",
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();

    assert!(table.has_catalog_managed_partitions());
    for (key, value) in [
        ("metastore.partitioned-table", "false"),
        ("format-table.partition-path-only-value", "true"),
        ("format-table.implementation", "engine"),
        ("type", "table"),
        ("path", "memory:/elsewhere"),
        ("file.format", "orc"),
    ] {
        let error = table
            .copy_with_time_travel(HashMap::from([(key.to_string(), value.to_string())]))
            .await
            .unwrap_err();
        assert!(
            matches!(error, paimon::Error::DataInvalid { .. }) && error.to_string().contains(key),
            "expected {key} validation error, got: {error}"
        );
    }

    let copied = table
        .copy_with_time_travel(HashMap::from([
            (
                "metastore.partitioned-table".to_string(),
                "TRUE".to_string(),
            ),
            (
                "format-table.partition-path-only-value".to_string(),
                "false".to_string(),
            ),
            (
                "format-table.implementation".to_string(),
                "PAIMON".to_string(),
            ),
            (
                "format-table.scan.list-parallelism".to_string(),
                "8".to_string(),
            ),
        ]))
        .await
        .unwrap();
    assert!(copied.has_catalog_managed_partitions());
    assert!(copied
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .unwrap()
        .splits()
        .is_empty());
}

#[tokio::test]
async fn test_rest_catalog_rejects_enabling_managed_partitions_in_dynamic_options() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[("metastore.partitioned-table", "false")]);
    let identifier = Identifier::new("default", "unmanaged_format");
    add_internal_table_with_schema(
        &ctx.server,
        "unmanaged_format",
        schema,
        "memory:/unmanaged_format",
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    assert!(!table.has_catalog_managed_partitions());

    let error = table
        .copy_with_time_travel(HashMap::from([(
            "metastore.partitioned-table".to_string(),
            "true".to_string(),
        )]))
        .await
        .unwrap_err();
    assert!(
        matches!(error, paimon::Error::DataInvalid { .. })
            && error.to_string().contains("metastore.partitioned-table"),
        "expected partition source validation error, got: {error}"
    );
}

#[tokio::test]
async fn test_rest_catalog_rejects_external_catalog_managed_format_table() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "external_managed_format");
    ctx.server.add_table_with_schema(
        "default",
        "external_managed_format",
        schema,
        "memory:/external_managed_format",
    );

    let error = ctx.catalog.get_table(&identifier).await.unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DataInvalid { message, .. }
            if message.contains("default.external_managed_format")
                && message.contains("internal")
    ));
}

#[tokio::test]
async fn test_rest_catalog_rejects_engine_managed_format_table() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[("format-table.implementation", "engine")]);
    let identifier = Identifier::new("default", "engine_managed_format");
    add_internal_table_with_schema(
        &ctx.server,
        "engine_managed_format",
        schema,
        "memory:/engine_managed_format",
    );

    let error = ctx.catalog.get_table(&identifier).await.unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DataInvalid { message, .. }
            if message.contains("metastore.partitioned-table")
                && message.contains("format-table.implementation=engine")
    ));
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_managed_format_scan_uses_registered_partition_paths_once() {
    let tmp = tempfile::tempdir().unwrap();
    for dt in ["2026-07-21", "2026-07-22"] {
        let partition_dir = tmp.path().join(format!("dt={dt}"));
        std::fs::create_dir_all(&partition_dir).unwrap();
        std::fs::write(partition_dir.join("part-0.parquet"), b"data").unwrap();
    }
    let table_path = format!("file://{}", tmp.path().display());

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "managed_visibility");
    add_internal_table_with_schema(&ctx.server, "managed_visibility", schema, &table_path);
    ctx.server.set_table_partitions(
        "default",
        "managed_visibility",
        vec![
            HashMap::from([("dt".to_string(), "2026-07-22".to_string())]),
            HashMap::from([("dt".to_string(), "2026-07-22".to_string())]),
        ],
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let plan = table.new_read_builder().new_scan().plan().await.unwrap();

    // `dt=2026-07-21` holds a file but is not registered; the repeated registration is read once.
    assert_eq!(plan.splits().len(), 1);
    assert!(plan.splits()[0].bucket_path().ends_with("/dt=2026-07-22"));
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_managed_format_scan_treats_registered_missing_directory_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let table_path = format!("file://{}", tmp.path().display());

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "managed_missing_directory");
    add_internal_table_with_schema(
        &ctx.server,
        "managed_missing_directory",
        schema,
        &table_path,
    );
    ctx.server.set_table_partitions(
        "default",
        "managed_missing_directory",
        vec![HashMap::from([(
            "dt".to_string(),
            "2026-07-22".to_string(),
        )])],
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let plan = table.new_read_builder().new_scan().plan().await.unwrap();

    assert!(plan.splits().is_empty());
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_managed_format_scan_propagates_partition_listing_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("dt=2026-07-22")).unwrap();
    std::fs::write(
        tmp.path().join("dt=2026-07-22").join("part-0.parquet"),
        b"data",
    )
    .unwrap();
    let table_path = format!("file://{}", tmp.path().display());

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "managed_scan_error");
    add_internal_table_with_schema(&ctx.server, "managed_scan_error", schema, &table_path);
    ctx.server
        .set_list_partitions_error_status(Some(StatusCode::NOT_IMPLEMENTED));

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let error = table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .unwrap_err();

    // The directory is not read in place of the registrations the catalog could not list.
    assert!(matches!(
        error,
        paimon::Error::RestApi {
            source: paimon::api::RestError::NotImplemented { .. }
        }
    ));
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_managed_format_scan_reports_table_for_malformed_partition_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let table_path = format!("file://{}", tmp.path().display());

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = format_table_schema(&[]);
    let identifier = Identifier::new("default", "managed_corrupt_metadata");
    add_internal_table_with_schema(&ctx.server, "managed_corrupt_metadata", schema, &table_path);
    ctx.server.set_table_partitions(
        "default",
        "managed_corrupt_metadata",
        vec![HashMap::from([
            ("dt".to_string(), "2026-07-22".to_string()),
            ("unexpected".to_string(), "value".to_string()),
        ])],
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let error = table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .unwrap_err();

    match error {
        paimon::Error::DataInvalid {
            message,
            source: Some(source),
        } => {
            assert!(message.contains("invalid partition metadata"));
            assert!(message.contains("default.managed_corrupt_metadata"));
            let cause = source.to_string();
            assert!(cause.contains("unexpected"), "unexpected cause: {cause}");
            assert!(cause.contains("dt"), "unexpected cause: {cause}");
        }
        other => panic!("expected invalid partition metadata, got: {other}"),
    }
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_rest_catalog_prunes_format_table_partition_filter() {
    use parquet::arrow::ArrowWriter;
    use std::fs::{create_dir_all, File};

    let tmp = tempfile::tempdir().unwrap();
    let format_path = format!("file://{}", tmp.path().display());
    let arrow_schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int64, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
    ]));
    for (dt, id, name) in [("2024-01-01", 1_i64, "alice"), ("2024-01-02", 2_i64, "bob")] {
        let dir = tmp.path().join(format!("dt={dt}"));
        create_dir_all(&dir).unwrap();
        let batch = RecordBatch::try_new(
            arrow_schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![id])),
                Arc::new(StringArray::from(vec![name])),
            ],
        )
        .unwrap();
        let file = File::create(dir.join("part-0.parquet")).unwrap();
        let mut writer = ArrowWriter::try_new(file, arrow_schema.clone(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("dt", DataType::VarChar(VarCharType::new(32).unwrap()))
        .column("id", DataType::BigInt(BigIntType::new()))
        .column("name", DataType::VarChar(VarCharType::new(255).unwrap()))
        .partition_keys(["dt"])
        .option("type", "format-table")
        .option("file.format", "parquet")
        .build()
        .unwrap();
    let identifier = Identifier::new("default", "format_partitioned_users");
    ctx.server
        .add_table_with_schema("default", "format_partitioned_users", schema, &format_path);

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("dt", Datum::String("2024-01-02".to_string()))
        .unwrap();
    let mut read_builder = table.new_read_builder();
    read_builder.with_filter(predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();
    assert_eq!(plan.splits().len(), 1);
    assert!(plan.splits()[0].bucket_path().contains("dt=2024-01-02"));

    let read = read_builder.new_read().unwrap();
    let batches = read
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    assert_eq!(batches.len(), 1);
    let dts = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    let ids = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(dts.value(0), "2024-01-02");
    assert_eq!(ids.value(0), 2);

    let missing_predicate = PredicateBuilder::new(table.schema().fields())
        .equal("dt", Datum::String("2024-01-03".to_string()))
        .unwrap();
    let mut read_builder = table.new_read_builder();
    read_builder.with_filter(missing_predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();
    assert!(plan.splits().is_empty());
}

#[cfg(not(windows))]
#[tokio::test]
async fn test_rest_catalog_reads_format_table_value_only_partition_path() {
    use parquet::arrow::ArrowWriter;
    use std::fs::{create_dir_all, File};

    let tmp = tempfile::tempdir().unwrap();
    let format_path = format!("file://{}", tmp.path().display());
    let arrow_schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowDataType::Int64, false),
        ArrowField::new("name", ArrowDataType::Utf8, true),
    ]));
    for (dt, id, name) in [("2024-01-01", 1_i64, "alice"), ("2024-01-02", 2_i64, "bob")] {
        let dir = tmp.path().join(dt);
        create_dir_all(&dir).unwrap();
        let batch = RecordBatch::try_new(
            arrow_schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![id])),
                Arc::new(StringArray::from(vec![name])),
            ],
        )
        .unwrap();
        let file = File::create(dir.join("part-0.parquet")).unwrap();
        let mut writer = ArrowWriter::try_new(file, arrow_schema.clone(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("dt", DataType::VarChar(VarCharType::new(32).unwrap()))
        .column("id", DataType::BigInt(BigIntType::new()))
        .column("name", DataType::VarChar(VarCharType::new(255).unwrap()))
        .partition_keys(["dt"])
        .option("type", "format-table")
        .option("file.format", "parquet")
        .option("format-table.partition-path-only-value", "true")
        .build()
        .unwrap();
    let identifier = Identifier::new("default", "format_value_only_partitioned_users");
    ctx.server.add_table_with_schema(
        "default",
        "format_value_only_partitioned_users",
        schema,
        &format_path,
    );

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let predicate = PredicateBuilder::new(table.schema().fields())
        .equal("dt", Datum::String("2024-01-02".to_string()))
        .unwrap();
    let mut read_builder = table.new_read_builder();
    read_builder.with_filter(predicate);
    let plan = read_builder.new_scan().plan().await.unwrap();
    assert_eq!(plan.splits().len(), 1);
    assert!(plan.splits()[0].bucket_path().ends_with("/2024-01-02"));

    let read = read_builder.new_read().unwrap();
    let batches = read
        .to_arrow(plan.splits())
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    let dts = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(dts.value(0), "2024-01-02");
}

#[tokio::test]
async fn test_catalog_get_table_not_found() {
    let ctx = setup_catalog(vec!["default"]).await;

    let identifier = Identifier::new("default", "non_existent");
    let result = ctx.catalog.get_table(&identifier).await;
    assert!(result.is_err(), "getting non-existent table should fail");
}

/// When no data token is vended (`data_token_enabled=false` or external
/// table), `get_table` must propagate catalog options to FileIO so an
/// OSS-pathed table picks up `fs.oss.*` keys. Java parity:
/// `RESTCatalog.fileIOFromOptions`.
#[tokio::test]
async fn test_catalog_get_table_propagates_oss_options_in_else_branch() {
    let prefix = "mock-test";
    let mut defaults = HashMap::new();
    defaults.insert("prefix".to_string(), prefix.to_string());
    let config = ConfigResponse::new(defaults);

    let server = start_mock_server(
        "test_warehouse".to_string(),
        "/tmp/test_warehouse".to_string(),
        config,
        vec!["default".to_string()],
    )
    .await;

    let url = server.url().expect("Failed to get server URL");
    let mut options = Options::new();
    options.set("uri", &url);
    options.set("warehouse", "test_warehouse");
    options.set("token.provider", "bear");
    options.set("token", "test_token");
    options.set("fs.oss.endpoint", "https://oss-cn-shanghai.aliyuncs.com");
    options.set("fs.oss.accessKeyId", "test-ak");
    options.set("fs.oss.accessKeySecret", "test-sk");

    let catalog = RESTCatalog::new(options, true)
        .await
        .expect("create catalog");

    let schema = test_schema();
    server.add_table_with_schema(
        "default",
        "oss_table",
        schema,
        "oss://test-bucket/warehouse/default.db/oss_table",
    );

    let identifier = Identifier::new("default", "oss_table");
    let result = catalog.get_table(&identifier).await;
    assert!(
        result.is_ok(),
        "expected get_table to succeed when fs.oss.* keys are present in catalog options; \
         got {result:?}"
    );
}

#[tokio::test]
async fn test_catalog_create_table() {
    let ctx = setup_catalog(vec!["default"]).await;

    let schema = test_schema();
    let identifier = Identifier::new("default", "new_table");

    let result = ctx.catalog.create_table(&identifier, schema, false).await;
    assert!(result.is_ok(), "failed to create table: {result:?}");

    // Verify table exists
    let tables = ctx.catalog.list_tables("default").await.unwrap();
    assert!(tables.contains(&"new_table".to_string()));
}

#[tokio::test]
async fn test_catalog_create_table_already_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table first
    ctx.server.add_table("default", "existing_table");

    let schema = test_schema();
    let identifier = Identifier::new("default", "existing_table");

    // Create with ignore_if_exists=false should fail
    let result = ctx.catalog.create_table(&identifier, schema, false).await;
    assert!(
        result.is_err(),
        "creating duplicate table should fail when ignore_if_exists=false"
    );
}

#[tokio::test]
async fn test_catalog_create_table_ignore_if_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table first
    ctx.server.add_table("default", "existing_table");

    let schema = test_schema();
    let identifier = Identifier::new("default", "existing_table");

    // Create with ignore_if_exists=true should succeed
    let result = ctx.catalog.create_table(&identifier, schema, true).await;
    assert!(
        result.is_ok(),
        "creating duplicate table should succeed when ignore_if_exists=true"
    );
}

#[tokio::test]
async fn test_catalog_drop_table() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table
    ctx.server.add_table("default", "table_to_drop");

    let identifier = Identifier::new("default", "table_to_drop");

    // Drop table
    let result = ctx.catalog.drop_table(&identifier, false).await;
    assert!(result.is_ok(), "failed to drop table: {result:?}");

    // Verify table is gone
    let tables = ctx.catalog.list_tables("default").await.unwrap();
    assert!(!tables.contains(&"table_to_drop".to_string()));
}

#[tokio::test]
async fn test_catalog_drop_table_not_found() {
    let ctx = setup_catalog(vec!["default"]).await;

    let identifier = Identifier::new("default", "non_existent");

    // Drop with ignore_if_not_exists=false should fail
    let result = ctx.catalog.drop_table(&identifier, false).await;
    assert!(
        result.is_err(),
        "dropping non-existent table should fail when ignore_if_not_exists=false"
    );
}

#[tokio::test]
async fn test_catalog_drop_table_ignore_if_not_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    let identifier = Identifier::new("default", "non_existent");

    // Drop with ignore_if_not_exists=true should succeed
    let result = ctx.catalog.drop_table(&identifier, true).await;
    assert!(
        result.is_ok(),
        "dropping non-existent table should succeed when ignore_if_not_exists=true"
    );
}

// ==================== Rename Table Tests ====================

#[tokio::test]
async fn test_catalog_rename_table() {
    let ctx = setup_catalog(vec!["default"]).await;

    // Add a table
    ctx.server.add_table("default", "old_table");

    let from = Identifier::new("default", "old_table");
    let to = Identifier::new("default", "new_table");

    // Rename table
    let result = ctx.catalog.rename_table(&from, &to, false).await;
    assert!(result.is_ok(), "failed to rename table: {result:?}");

    // Verify old table is gone and new table exists
    let tables = ctx.catalog.list_tables("default").await.unwrap();
    assert!(!tables.contains(&"old_table".to_string()));
    assert!(tables.contains(&"new_table".to_string()));
}

#[tokio::test]
async fn test_catalog_rename_table_not_found() {
    let ctx = setup_catalog(vec!["default"]).await;

    let from = Identifier::new("default", "non_existent");
    let to = Identifier::new("default", "new_name");

    // Rename with ignore_if_not_exists=false should fail
    let result = ctx.catalog.rename_table(&from, &to, false).await;
    assert!(
        result.is_err(),
        "renaming non-existent table should fail when ignore_if_not_exists=false"
    );
}

#[tokio::test]
async fn test_catalog_rename_table_ignore_if_not_exists() {
    let ctx = setup_catalog(vec!["default"]).await;

    let from = Identifier::new("default", "non_existent");
    let to = Identifier::new("default", "new_name");

    // Rename with ignore_if_not_exists=true should succeed
    let result = ctx.catalog.rename_table(&from, &to, true).await;
    assert!(
        result.is_ok(),
        "renaming non-existent table should succeed when ignore_if_not_exists=true"
    );
}

// ==================== Alter Table Tests ====================

#[tokio::test]
async fn test_catalog_alter_table() {
    let ctx = setup_catalog(vec!["default"]).await;

    let identifier = Identifier::new("default", "some_table");
    ctx.catalog
        .create_table(&identifier, test_schema(), false)
        .await
        .unwrap();

    // alter_table on an existing table succeeds (client builds the request and
    // POSTs it; the mock accepts it).
    let changes = vec![SchemaChange::update_column_comment(
        "id".to_string(),
        "the id".to_string(),
    )];
    let result = ctx.catalog.alter_table(&identifier, changes, false).await;
    assert!(result.is_ok(), "alter_table should succeed: {result:?}");

    // alter_table on a missing table: error, unless ignore_if_not_exists.
    let missing = Identifier::new("default", "ghost");
    assert!(ctx
        .catalog
        .alter_table(&missing, vec![], false)
        .await
        .is_err());
    ctx.catalog
        .alter_table(&missing, vec![], true)
        .await
        .unwrap();
}

#[tokio::test]
async fn test_catalog_create_tag_with_retention() {
    let ctx = setup_catalog(vec!["default"]).await;
    ctx.server.add_table("default", "managed_table");
    let identifier = Identifier::new("default", "managed_table");
    let catalog: &dyn Catalog = &ctx.catalog;
    for (name, snapshot_id, retention) in [
        ("explicit", Some(1), Some("1d")),
        ("latest", None, Some(" 12 HOURS ")),
        ("micro", Some(1), Some("500micro")),
        ("plain", None, None),
    ] {
        catalog
            .create_tag_with_retention(&identifier, name, snapshot_id, retention, false)
            .await
            .unwrap();
        let tag = catalog.get_tag(&identifier, name).await.unwrap();
        assert_eq!(tag.snapshot.id(), 1);
        assert_eq!(tag.tag_time_retained.as_deref(), retention);
    }

    assert!(matches!(
        catalog
            .create_tag_with_retention(&identifier, "explicit", Some(1), Some("12h"), false)
            .await,
        Err(paimon::Error::TagAlreadyExist { .. })
    ));
    catalog
        .create_tag_with_retention(&identifier, "explicit", Some(1), Some("12h"), true)
        .await
        .unwrap();
    catalog
        .create_tag(&identifier, "explicit", Some(1), true)
        .await
        .unwrap();
    assert_eq!(
        catalog
            .get_tag(&identifier, "explicit")
            .await
            .unwrap()
            .tag_time_retained
            .as_deref(),
        Some("1d")
    );
    assert!(matches!(
        catalog
            .create_tag_with_retention(&identifier, "missing", Some(2), Some("1d"), false)
            .await,
        Err(paimon::Error::SnapshotNotExist { snapshot_id: 2 })
    ));
    assert!(matches!(
        catalog
            .create_tag_with_retention(
                &Identifier::new("default", "missing"),
                "tag",
                None,
                Some("1d"),
                false
            )
            .await,
        Err(paimon::Error::TableNotExist { .. })
    ));
}

#[tokio::test]
async fn test_catalog_tag_lifecycle() {
    let ctx = setup_catalog(vec!["default"]).await;
    ctx.server.add_table("default", "managed_table");
    let identifier = Identifier::new("default", "managed_table");

    ctx.catalog
        .create_tag(&identifier, "release-1", Some(1), false)
        .await
        .unwrap();
    let tag = ctx.catalog.get_tag(&identifier, "release-1").await.unwrap();
    assert_eq!(tag.tag_name, "release-1");
    assert_eq!(tag.snapshot.id(), 1);

    assert!(matches!(
        ctx.catalog
            .create_tag(&identifier, "release-1", Some(1), false)
            .await,
        Err(paimon::Error::TagAlreadyExist { .. })
    ));
    ctx.catalog
        .create_tag(&identifier, "release-1", Some(1), true)
        .await
        .unwrap();
    assert!(matches!(
        ctx.catalog
            .create_tag(&identifier, "missing", Some(2), false)
            .await,
        Err(paimon::Error::SnapshotNotExist { snapshot_id: 2 })
    ));

    ctx.catalog
        .delete_tag(&identifier, "release-1", false)
        .await
        .unwrap();
    assert!(matches!(
        ctx.catalog.get_tag(&identifier, "release-1").await,
        Err(paimon::Error::TagNotExist { .. })
    ));
    assert!(matches!(
        ctx.catalog
            .delete_tag(&identifier, "release-1", false)
            .await,
        Err(paimon::Error::TagNotExist { .. })
    ));
    ctx.catalog
        .delete_tag(&identifier, "release-1", true)
        .await
        .unwrap();
}

// ==================== Multiple Databases Tests ====================

#[tokio::test]
async fn test_catalog_multiple_databases_with_tables() {
    let ctx = setup_catalog(vec!["db1", "db2"]).await;

    // Add tables to different databases
    ctx.server.add_table("db1", "table1_db1");
    ctx.server.add_table("db1", "table2_db1");
    ctx.server.add_table("db2", "table1_db2");

    // Verify db1 tables
    let tables_db1 = ctx.catalog.list_tables("db1").await.unwrap();
    assert_eq!(tables_db1.len(), 2);
    assert!(tables_db1.contains(&"table1_db1".to_string()));
    assert!(tables_db1.contains(&"table2_db1".to_string()));

    // Verify db2 tables
    let tables_db2 = ctx.catalog.list_tables("db2").await.unwrap();
    assert_eq!(tables_db2.len(), 1);
    assert!(tables_db2.contains(&"table1_db2".to_string()));
}

#[tokio::test]
async fn test_catalog_get_view() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema: ViewSchema = serde_json::from_value(serde_json::json!({
        "fields": [{"id": 0, "name": "id", "type": "INT"}],
        "query": "SELECT id FROM source",
        "dialects": {"datafusion": "SELECT id FROM source WHERE id > 0"},
        "comment": null,
        "options": {}
    }))
    .unwrap();
    ctx.server.add_view("default", "active_ids", schema);

    let view = ctx
        .catalog
        .get_view(&Identifier::new("default", "active_ids"))
        .await
        .unwrap();

    assert_eq!(view.full_name(), "default.active_ids");
    assert_eq!(
        view.query_for("datafusion"),
        "SELECT id FROM source WHERE id > 0"
    );
}

#[tokio::test]
async fn test_catalog_create_view() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = ViewSchema::new(
        serde_json::from_value(serde_json::json!([
            {"id": 0, "name": "id", "type": "INT"}
        ]))
        .unwrap(),
        "SELECT id FROM source".to_string(),
        HashMap::from([(
            "datafusion".to_string(),
            "SELECT id FROM source".to_string(),
        )]),
        None,
        HashMap::new(),
    );
    let identifier = Identifier::new("default", "active_ids");

    ctx.catalog
        .create_view(&identifier, schema, false)
        .await
        .unwrap();

    let view = ctx.catalog.get_view(&identifier).await.unwrap();
    assert_eq!(view.query_for("datafusion"), "SELECT id FROM source");
}

#[tokio::test]
async fn test_catalog_drop_view() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "active_ids");
    ctx.catalog
        .create_view(
            &identifier,
            ViewSchema::new(
                Vec::new(),
                "SELECT 1".to_string(),
                HashMap::new(),
                None,
                HashMap::new(),
            ),
            false,
        )
        .await
        .unwrap();

    ctx.catalog.drop_view(&identifier, false).await.unwrap();

    assert!(ctx.catalog.list_views("default").await.unwrap().is_empty());
    assert!(matches!(
        ctx.catalog.get_view(&identifier).await.unwrap_err(),
        paimon::Error::ViewNotExist { full_name } if full_name == "default.active_ids"
    ));
}

#[tokio::test]
async fn test_catalog_drop_missing_view_honors_ignore_if_not_exists() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "missing");

    assert!(matches!(
        ctx.catalog.drop_view(&identifier, false).await.unwrap_err(),
        paimon::Error::ViewNotExist { full_name } if full_name == "default.missing"
    ));
    ctx.catalog.drop_view(&identifier, true).await.unwrap();
}

#[tokio::test]
async fn test_catalog_drop_view_if_exists_does_not_hide_other_errors() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "active_ids");

    ctx.server
        .set_drop_view_error_status(Some(StatusCode::FORBIDDEN));
    assert!(matches!(
        ctx.catalog.drop_view(&identifier, true).await.unwrap_err(),
        paimon::Error::RestApi {
            source: paimon::api::RestError::Forbidden { .. }
        }
    ));

    ctx.server
        .set_drop_view_error_status(Some(StatusCode::INTERNAL_SERVER_ERROR));
    assert!(matches!(
        ctx.catalog.drop_view(&identifier, true).await.unwrap_err(),
        paimon::Error::RestApi {
            source: paimon::api::RestError::ServiceFailure { .. }
        }
    ));
}

#[tokio::test]
async fn test_catalog_create_view_missing_database() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("missing_db", "active_ids");
    let schema = ViewSchema::new(
        Vec::new(),
        "SELECT 1".to_string(),
        HashMap::new(),
        None,
        HashMap::new(),
    );

    let error = ctx
        .catalog
        .create_view(&identifier, schema, false)
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DatabaseNotExist { database } if database == "missing_db"
    ));
}

#[tokio::test]
async fn test_catalog_create_view_already_exists() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "active_ids");
    let schema = ViewSchema::new(
        Vec::new(),
        "SELECT 1".to_string(),
        HashMap::new(),
        None,
        HashMap::new(),
    );
    ctx.catalog
        .create_view(&identifier, schema.clone(), false)
        .await
        .unwrap();

    let error = ctx
        .catalog
        .create_view(&identifier, schema, false)
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::ViewAlreadyExist { full_name } if full_name == "default.active_ids"
    ));
}

#[tokio::test]
async fn test_catalog_create_view_ignore_if_exists() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "active_ids");
    let schema = ViewSchema::new(
        Vec::new(),
        "SELECT 1".to_string(),
        HashMap::new(),
        None,
        HashMap::new(),
    );
    ctx.catalog
        .create_view(&identifier, schema.clone(), false)
        .await
        .unwrap();

    ctx.catalog
        .create_view(&identifier, schema, true)
        .await
        .unwrap();
}

#[tokio::test]
async fn test_catalog_list_views() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema: ViewSchema = serde_json::from_value(serde_json::json!({
        "fields": [{"id": 0, "name": "id", "type": "INT"}],
        "query": "SELECT 1 AS id",
        "dialects": {},
        "comment": null,
        "options": {}
    }))
    .unwrap();
    ctx.server.add_view("default", "v2", schema.clone());
    ctx.server.add_view("default", "v1", schema);

    assert_eq!(
        ctx.catalog.list_views("default").await.unwrap(),
        vec!["v1", "v2"]
    );
}

#[tokio::test]
async fn test_catalog_get_function() {
    let ctx = setup_catalog(vec!["default"]).await;
    let input_params: Vec<DataField> = serde_json::from_value(serde_json::json!([
        {"id": 0, "name": "x", "type": "INT"}
    ]))
    .unwrap();
    let return_params: Vec<DataField> = serde_json::from_value(serde_json::json!([
        {"id": 0, "name": "result", "type": "INT"}
    ]))
    .unwrap();
    ctx.server.add_function(Function::new(
        Identifier::new("default", "plus_one"),
        Some(input_params),
        Some(return_params),
        true,
        HashMap::from([(
            "datafusion".to_string(),
            FunctionDefinition::Sql {
                definition: "x + 1".to_string(),
            },
        )]),
        None,
        HashMap::new(),
    ));

    let function = ctx
        .catalog
        .get_function(&Identifier::new("default", "plus_one"))
        .await
        .unwrap();

    assert_eq!(function.full_name(), "default.plus_one");
    assert_eq!(
        function
            .definition("datafusion")
            .and_then(FunctionDefinition::sql),
        Some("x + 1")
    );
}

#[tokio::test]
async fn test_catalog_create_function() {
    let ctx = setup_catalog(vec!["default"]).await;
    let function = Function::new(
        Identifier::new("default", "plus_one"),
        Some(
            serde_json::from_value(serde_json::json!([
                {"id": 0, "name": "x", "type": "BIGINT"}
            ]))
            .unwrap(),
        ),
        Some(
            serde_json::from_value(serde_json::json!([
                {"id": 0, "name": "result", "type": "BIGINT"}
            ]))
            .unwrap(),
        ),
        true,
        HashMap::from([(
            "datafusion".to_string(),
            FunctionDefinition::Sql {
                definition: "x + 1".to_string(),
            },
        )]),
        None,
        HashMap::new(),
    );

    ctx.catalog.create_function(&function, false).await.unwrap();

    let stored = ctx
        .catalog
        .get_function(function.identifier())
        .await
        .unwrap();
    assert_eq!(stored, function);
}

#[tokio::test]
async fn test_catalog_create_function_already_exists() {
    let ctx = setup_catalog(vec!["default"]).await;
    let function = Function::new(
        Identifier::new("default", "answer"),
        Some(Vec::new()),
        Some(
            serde_json::from_value(serde_json::json!([
                {"id": 0, "name": "result", "type": "INT"}
            ]))
            .unwrap(),
        ),
        true,
        HashMap::from([(
            "datafusion".to_string(),
            FunctionDefinition::Sql {
                definition: "42".to_string(),
            },
        )]),
        None,
        HashMap::new(),
    );
    ctx.catalog.create_function(&function, false).await.unwrap();

    let error = ctx
        .catalog
        .create_function(&function, false)
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::FunctionAlreadyExist { full_name }
            if full_name == "default.answer"
    ));
}

#[tokio::test]
async fn test_catalog_create_function_ignore_if_exists() {
    let ctx = setup_catalog(vec!["default"]).await;
    let function = Function::new(
        Identifier::new("default", "answer"),
        Some(Vec::new()),
        Some(Vec::new()),
        true,
        HashMap::new(),
        None,
        HashMap::new(),
    );
    ctx.catalog.create_function(&function, false).await.unwrap();

    ctx.catalog.create_function(&function, true).await.unwrap();
}

#[tokio::test]
async fn test_catalog_create_function_missing_database() {
    let ctx = setup_catalog(vec!["default"]).await;
    let function = Function::new(
        Identifier::new("missing_db", "answer"),
        Some(Vec::new()),
        Some(Vec::new()),
        true,
        HashMap::new(),
        None,
        HashMap::new(),
    );

    let error = ctx
        .catalog
        .create_function(&function, false)
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::DatabaseNotExist { database } if database == "missing_db"
    ));
}

#[tokio::test]
async fn test_catalog_list_functions() {
    let ctx = setup_catalog(vec!["default"]).await;
    let return_params: Vec<DataField> = serde_json::from_value(serde_json::json!([
        {"id": 0, "name": "result", "type": "INT"}
    ]))
    .unwrap();
    for name in ["zeta", "alpha"] {
        ctx.server.add_function(Function::new(
            Identifier::new("default", name),
            Some(Vec::new()),
            Some(return_params.clone()),
            true,
            HashMap::from([(
                "datafusion".to_string(),
                FunctionDefinition::Sql {
                    definition: "1".to_string(),
                },
            )]),
            None,
            HashMap::new(),
        ));
    }

    assert_eq!(
        ctx.catalog.list_functions("default").await.unwrap(),
        vec!["alpha", "zeta"]
    );
}

#[tokio::test]
async fn test_catalog_get_missing_view_maps_error() {
    let ctx = setup_catalog(vec!["default"]).await;

    let error = ctx
        .catalog
        .get_view(&Identifier::new("default", "missing"))
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::ViewNotExist { full_name } if full_name == "default.missing"
    ));
}

#[tokio::test]
async fn test_catalog_get_missing_function_maps_error() {
    let ctx = setup_catalog(vec!["default"]).await;

    let error = ctx
        .catalog
        .get_function(&Identifier::new("default", "missing"))
        .await
        .unwrap_err();

    assert!(matches!(
        error,
        paimon::Error::FunctionNotExist { full_name } if full_name == "default.missing"
    ));
}

#[tokio::test]
async fn test_catalog_maps_unsupported_view_and_function_endpoints() {
    let ctx = setup_catalog(vec!["default"]).await;
    ctx.server.set_view_function_endpoints_unsupported();

    assert!(matches!(
        ctx.catalog
            .create_view(
                &Identifier::new("default", "view"),
                ViewSchema::new(
                    Vec::new(),
                    "SELECT 1".to_string(),
                    HashMap::new(),
                    None,
                    HashMap::new(),
                ),
                false,
            )
            .await
            .unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog.list_views("default").await.unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog
            .get_view(&Identifier::new("default", "view"))
            .await
            .unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog
            .drop_view(&Identifier::new("default", "view"), true)
            .await
            .unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog.list_functions("default").await.unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog
            .create_function(
                &Function::new(
                    Identifier::new("default", "function"),
                    Some(Vec::new()),
                    Some(Vec::new()),
                    true,
                    HashMap::new(),
                    None,
                    HashMap::new(),
                ),
                false,
            )
            .await
            .unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
    assert!(matches!(
        ctx.catalog
            .get_function(&Identifier::new("default", "function"))
            .await
            .unwrap_err(),
        paimon::Error::Unsupported { .. }
    ));
}

#[tokio::test]
async fn test_load_table_returns_external_for_declared_type() {
    use paimon::catalog::LoadedTable;
    use paimon::spec::TableType;

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .option("type", "iceberg-table")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "ice_t", schema, "file:///unused");

    let identifier = Identifier::new("default", "ice_t");
    let routed = ctx.catalog.load_table(&identifier).await.unwrap();
    assert!(
        matches!(routed, LoadedTable::External(ref e) if e.declared() == TableType::IcebergTable),
        "{routed:?}"
    );
}

#[tokio::test]
async fn test_load_table_constructs_native_object_table() {
    use paimon::catalog::LoadedTable;

    let object_dir = tempfile::TempDir::new().unwrap();
    std::fs::write(object_dir.path().join("object.txt"), b"object").unwrap();
    let object_location = format!("file://{}", object_dir.path().display());

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("ignored", DataType::BigInt(BigIntType::new()))
        .option("type", "object-table")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "objects", schema, &object_location);

    let loaded = ctx
        .catalog
        .load_table(&Identifier::new("default", "objects"))
        .await
        .unwrap();
    let LoadedTable::Object(table) = loaded else {
        panic!("expected a native object table, got {loaded:?}");
    };
    assert_eq!(table.location(), object_location);
    #[cfg(not(windows))]
    assert_eq!(
        table
            .list_objects()
            .await
            .unwrap()
            .iter()
            .map(|entry| entry.path())
            .collect::<Vec<_>>(),
        vec!["object.txt"]
    );
}

#[tokio::test]
async fn test_load_table_fails_closed_on_query_auth() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .option("type", "iceberg-table")
        .option("query-auth.enabled", "true")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "authed_ice_t", schema, "file:///unused");

    let identifier = Identifier::new("default", "authed_ice_t");
    let err = ctx.catalog.load_table(&identifier).await.unwrap_err();
    assert!(
        matches!(err, paimon::Error::Unsupported { ref message } if message.contains("query-auth")),
        "{err:?}"
    );
}

#[tokio::test]
async fn test_load_table_constructs_paimon_for_undeclared_type() {
    use paimon::catalog::LoadedTable;

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "plain_t", schema, "file:///unused");

    let identifier = Identifier::new("default", "plain_t");
    let routed = ctx.catalog.load_table(&identifier).await.unwrap();
    match routed {
        LoadedTable::Paimon(table) => {
            assert_eq!(table.identifier().full_name(), "default.plain_t");
        }
        other => panic!("expected a constructed Paimon table, got {other:?}"),
    }
}

#[tokio::test]
async fn test_get_table_fails_closed_on_iceberg_table() {
    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .option("type", "iceberg-table")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "raw_ice_t", schema, "file:///unused");

    let err = ctx
        .catalog
        .get_table(&Identifier::new("default", "raw_ice_t"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, paimon::Error::Unsupported { ref message }
            if message.contains("cannot be read as a Paimon table")),
        "{err:?}"
    );
}

#[tokio::test]
async fn test_load_table_parses_declared_type_case_insensitively() {
    use paimon::catalog::LoadedTable;
    use paimon::spec::TableType;

    let ctx = setup_catalog(vec!["default"]).await;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .option("type", "ICEBERG-TABLE")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "upper_ice_t", schema, "file:///unused");

    let routed = ctx
        .catalog
        .load_table(&Identifier::new("default", "upper_ice_t"))
        .await
        .unwrap();
    assert!(
        matches!(routed, LoadedTable::External(ref e) if e.declared() == TableType::IcebergTable),
        "{routed:?}"
    );
}

#[tokio::test]
async fn test_load_table_rejects_unknown_declared_type() {
    let ctx = setup_catalog(vec!["default"]).await;
    let valid = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::new()))
        .build()
        .unwrap();
    let mut payload = serde_json::to_value(&valid).unwrap();
    payload["options"] = serde_json::json!({ "type": "delta-table" });
    let schema: Schema = serde_json::from_value(payload).unwrap();
    ctx.server
        .add_table_with_schema("default", "delta_t", schema, "file:///unused");

    let err = ctx
        .catalog
        .load_table(&Identifier::new("default", "delta_t"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, paimon::Error::Unsupported { ref message }
            if message.contains("unknown table type")),
        "{err:?}"
    );
}

// Skipped on Windows for the same opendal `fs` StripPrefixError as the
// blob-view regression above: it writes through FileSystemCatalog.
#[cfg(not(windows))]
#[tokio::test]
async fn test_query_auth_unrestricted_user_can_read() {
    let tmp = tempfile::tempdir().unwrap();
    let warehouse = format!("file://{}", tmp.path().display());
    let mut fs_options = Options::new();
    fs_options.set(CatalogOptions::WAREHOUSE, &warehouse);
    let fs_catalog = FileSystemCatalog::new(fs_options).expect("create filesystem catalog");
    fs_catalog
        .create_database("default", true, HashMap::new())
        .await
        .unwrap();
    let identifier = Identifier::new("default", "guarded");
    let columns = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .build()
        .unwrap();
    fs_catalog
        .create_table(&identifier, columns, false)
        .await
        .unwrap();
    let plain = fs_catalog.get_table(&identifier).await.unwrap();
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![ArrowField::new(
            "id",
            ArrowDataType::Int32,
            false,
        )])),
        vec![Arc::new(Int32Array::from(vec![1, 2, 3]))],
    )
    .unwrap();
    write_batch(&plain, batch, "query-auth-fixture").await;

    let ctx = setup_catalog(vec!["default"]).await;
    let guarded_schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .option("query-auth.enabled", "true")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "guarded", guarded_schema, plain.location());

    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    let read_builder = table.new_read_builder();
    let plan = read_builder.new_scan().plan().await.unwrap();
    assert!(
        !plan.splits().is_empty(),
        "the fixture must produce a split, or the read below proves nothing"
    );

    let batches = read_builder
        .new_read()
        .unwrap()
        .to_arrow(plan.splits())
        .expect("an unrestricted user must be allowed to read")
        .try_collect::<Vec<_>>()
        .await
        .expect("and the rows must decode");
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).sum::<usize>(),
        3,
        "every written row must come back"
    );
}

fn schema_of(columns: &[&str], options: &[(&str, &str)]) -> Schema {
    let mut builder = Schema::builder();
    for name in columns {
        builder = builder.column(*name, DataType::Int(IntType::new()));
    }
    for (key, value) in options {
        builder = builder.option(*key, *value);
    }
    builder.build().unwrap()
}

const GUARDED: &[(&str, &str)] = &[("query-auth.enabled", "true")];

struct Guarded {
    ctx: TestContext,
    table: Table,
    identifier: Identifier,
    _tmp: tempfile::TempDir,
}

async fn guarded(name: &str, columns: &[&str]) -> Guarded {
    let ctx = setup_catalog(vec!["default"]).await;
    let tmp = tempfile::tempdir().unwrap();
    let path = format!("file://{}", tmp.path().display());
    ctx.server
        .add_table_with_schema("default", name, schema_of(columns, GUARDED), &path);
    let identifier = Identifier::new("default", name);
    let table = ctx.catalog.get_table(&identifier).await.unwrap();
    Guarded {
        ctx,
        table,
        identifier,
        _tmp: tmp,
    }
}

async fn plan_err(table: &Table, why: &str) -> paimon::Error {
    table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .expect_err(why)
}

#[track_caller]
fn assert_refused(err: paimon::Error) {
    assert!(
        matches!(err, paimon::Error::Unsupported { ref message }
            if message.contains("query-auth.enabled")),
        "{err:?}"
    );
}

#[track_caller]
fn assert_drifted(err: paimon::Error, what: &str) {
    assert!(
        matches!(err, paimon::Error::DataInvalid { ref message, .. }
            if message.contains(what)),
        "{err:?}"
    );
}

fn restricted() -> paimon::api::AuthTableQueryResponse {
    paimon::api::AuthTableQueryResponse {
        filter: Some(vec!["{\"field\":\"id\"}".to_string()]),
        column_masking: None,
    }
}

#[tokio::test]
async fn test_query_auth_restricted_user_is_refused_at_plan_time() {
    let g = guarded("restricted", &["id"]).await;
    g.ctx
        .server
        .set_auth_response("default", "restricted", restricted());

    assert_refused(
        plan_err(
            &g.table,
            "a restricted user must be refused before a plan exists",
        )
        .await,
    );
}

#[tokio::test]
async fn test_query_auth_refuses_a_stale_handle() {
    let g = guarded("drifting", &["id"]).await;
    g.ctx.server.set_table_schema_id(
        "default",
        "drifting",
        schema_of(&["id", "extra"], GUARDED),
        7,
    );

    assert_drifted(
        plan_err(&g.table, "a handle whose schema drifted must be refused").await,
        "now resolves to schema",
    );
}

#[tokio::test]
async fn test_query_auth_refuses_other_columns_under_the_same_schema_id() {
    // Same id, other fields: the id alone does not say what the server rules on.
    let g = guarded("edited", &["id"]).await;
    g.ctx
        .server
        .set_table_schema_id("default", "edited", schema_of(&["id", "extra"], GUARDED), 0);

    assert_drifted(
        plan_err(
            &g.table,
            "a handle whose columns differ from the server's must be refused",
        )
        .await,
        "serves other columns",
    );
}

#[tokio::test]
async fn test_query_auth_refuses_a_schema_replaced_copy() {
    // A caller can restore a dropped column under the current schema id; the
    // copy is no longer the handle the catalog loaded.
    let g = guarded("replaced", &["id"]).await;
    let forged = g
        .table
        .copy_with_resolved_schema(
            paimon::spec::TableSchema::new(0, &schema_of(&["id", "secret"], GUARDED)),
            "main",
        )
        .unwrap();

    assert_refused(plan_err(&forged, "a schema-replaced copy must not plan").await);
}

#[tokio::test]
async fn test_query_auth_refuses_a_recreated_table() {
    let g = guarded("recreated", &["id"]).await;
    g.ctx
        .server
        .set_table_uuid("default", "recreated", "uuid-of-the-replacement");

    assert_drifted(
        plan_err(
            &g.table,
            "a re-created table must not reuse this handle's grant",
        )
        .await,
        "now resolves to uuid",
    );
}

#[tokio::test]
async fn test_query_auth_refuses_a_table_recreated_while_planning() {
    let g = guarded("planned", &["id"]).await;
    g.ctx
        .server
        .set_table_uuid_after_calls("default", "planned", "uuid-of-the-replacement", 2);

    assert_drifted(
        plan_err(&g.table, "the files just planned belong to the replacement").await,
        "now resolves to uuid",
    );
}

#[tokio::test]
async fn test_query_auth_refuses_a_table_recreated_mid_exchange() {
    let g = guarded("swapped", &["id"]).await;
    g.ctx
        .server
        .set_table_uuid_after_auth("default", "swapped", "uuid-after-the-exchange");

    assert_drifted(
        plan_err(&g.table, "a table replaced mid-exchange must be refused").await,
        "now resolves to uuid",
    );
}

#[tokio::test]
async fn test_query_auth_refuses_a_server_that_reports_no_identity() {
    let g = guarded("anonymous", &["id"]).await;
    g.ctx.server.clear_table_identity("default", "anonymous");

    assert_drifted(
        plan_err(
            &g.table,
            "a check that cannot establish the table has not checked anything",
        )
        .await,
        "nothing the server reports",
    );
}

#[tokio::test]
async fn test_query_auth_user_granted_all_business_columns_can_read() {
    let g = guarded("granted", &["id", "name"]).await;
    g.ctx.server.set_column_auth(
        "default",
        "granted",
        vec!["id".to_string(), "name".to_string()],
    );

    g.table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .expect("a user granted every column must be authorized");
}

#[tokio::test]
async fn test_query_auth_is_not_weakened_by_a_table_recreated_under_the_same_name() {
    let g = guarded("guarded", &["id"]).await;
    g.ctx
        .server
        .set_table_schema_id("default", "guarded", schema_of(&["id"], &[]), 0);

    let err = g
        .table
        .new_read_builder()
        .new_scan()
        .with_scan_all_files()
        .plan()
        .await
        .expect_err("the answer is now about a different table over the same files");
    assert_refused(err);
}

#[tokio::test]
async fn test_query_auth_allows_a_nested_projection_but_not_an_extra_nested_field() {
    let ctx = setup_catalog(vec!["default"]).await;
    let tmp = tempfile::tempdir().unwrap();
    let path = format!("file://{}", tmp.path().display());
    let nested = |names: &[&str]| {
        let children = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                paimon::spec::DataField::new(
                    i as i32 + 1,
                    name.to_string(),
                    DataType::Int(IntType::new()),
                )
            })
            .collect();
        DataType::Row(paimon::spec::RowType::new(children))
    };
    let served = Schema::builder()
        .column("info", nested(&["a", "b"]))
        .option("query-auth.enabled", "true")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "nested", served, &path);

    let table = ctx
        .catalog
        .get_table(&Identifier::new("default", "nested"))
        .await
        .unwrap();
    let plan = table.new_read_builder().new_scan().plan().await.unwrap();
    let read_with = |info: DataType| {
        let field =
            paimon::spec::DataField::new(table.schema().fields()[0].id(), "info".to_string(), info);
        let mut builder = table.new_read_builder();
        builder.with_read_type(vec![field]);
        builder.new_read().unwrap().to_arrow(plan.splits())
    };

    // Reading a subset of the authorized children is a projection.
    assert!(read_with(nested(&["a"])).is_ok());
    // Reading one the server never ruled on is not.
    let Err(err) = read_with(nested(&["a", "b", "hidden"])) else {
        panic!("a nested child the server never ruled on must be refused")
    };
    assert_refused(err);
}

#[tokio::test]
async fn test_a_decorated_name_loads_and_only_query_auth_refuses_it() {
    let ctx = setup_catalog(vec!["default"]).await;
    let tmp = tempfile::tempdir().unwrap();
    let path = format!("file://{}", tmp.path().display());
    // A literal name the validator permits and the server stores as is: the
    // catalog hands it back, as on main.
    ctx.server
        .add_table_with_schema("default", "plain$files", schema_of(&["id"], &[]), &path);
    for name in ["guarded$branch_dev", "guarded$files"] {
        ctx.server
            .add_table_with_schema("default", name, schema_of(&["id"], GUARDED), &path);
    }
    ctx.catalog
        .get_table(&Identifier::new("default", "plain$files"))
        .await
        .expect("an ordinary table's name is the server's business");
    // The view such a name addresses is not what the server rules on.
    for name in ["guarded$branch_dev", "guarded$files"] {
        let table = ctx
            .catalog
            .get_table(&Identifier::new("default", name))
            .await
            .unwrap();
        assert_refused(plan_err(&table, name).await);
    }
}

#[tokio::test]
async fn test_query_auth_refuses_an_assembled_handle() {
    let g = guarded("guarded", &["id"]).await;
    let elsewhere = tempfile::tempdir().unwrap();
    for (schema, location) in [
        (g.table.schema().clone(), g.table.location().to_string()),
        (
            paimon::spec::TableSchema::new(
                g.table.schema().id(),
                &schema_of(&["id", "dropped"], GUARDED),
            ),
            g.table.location().to_string(),
        ),
        (
            g.table.schema().clone(),
            format!("file://{}", elsewhere.path().display()),
        ),
    ] {
        let assembled = paimon::table::Table::new(
            g.table.file_io().clone(),
            g.identifier.clone(),
            location,
            schema,
            g.table.rest_env().cloned(),
        );
        assert_refused(plan_err(&assembled, "an assembled handle carries no session").await);
    }
}

#[tokio::test]
async fn test_rest_catalog_manages_permissions_end_to_end() {
    let ctx = setup_catalog(vec!["default"]).await;
    let resource = PermissionResource::table("default", "orders");
    let assignment =
        PermissionAssignment::new(resource.clone(), "select", "analyst", None, None).unwrap();

    ctx.catalog.grant_permission(&assignment).await.unwrap();
    let page = ctx
        .catalog
        .list_permissions_paged(&ListPermissionsRequest::new(resource.clone()))
        .await
        .unwrap();
    assert_eq!(page.elements, vec![assignment]);

    ctx.catalog
        .revoke_permission(&resource, "SELECT", "analyst")
        .await
        .unwrap();
    let page = ctx
        .catalog
        .list_permissions_paged(&ListPermissionsRequest::new(resource))
        .await
        .unwrap();
    assert!(page.elements.is_empty());
}

#[tokio::test]
async fn test_rest_catalog_manages_policies_end_to_end() {
    let ctx = setup_catalog(vec!["default"]).await;
    let identifier = Identifier::new("default", "orders");
    ctx.catalog
        .create_table(&identifier, test_schema(), false)
        .await
        .unwrap();
    let resource = PermissionResource::table("default", "orders");
    let predicate = r#"{"kind":"LEAF","transform":{"name":"FIELD_REF","fieldRef":{"index":0,"name":"id","type":"BIGINT"}},"function":"EQUAL","literals":[1]}"#;
    let policy = DataPolicy::new_row_filter(
        resource.clone(),
        RowFilter::new(predicate).unwrap(),
        "analyst",
    )
    .unwrap();

    ctx.catalog.create_policy(&policy).await.unwrap();
    let page = ctx
        .catalog
        .list_policies_paged(&ListPoliciesRequest::new(resource.clone()))
        .await
        .unwrap();
    assert_eq!(page.elements, vec![policy]);

    ctx.catalog
        .drop_policy(&resource, PolicyType::RowFilter, "analyst", None, false)
        .await
        .unwrap();
    let page = ctx
        .catalog
        .list_policies_paged(&ListPoliciesRequest::new(resource))
        .await
        .unwrap();
    assert!(page.elements.is_empty());
}

#[tokio::test]
async fn test_branch_write_copy_loads_catalog_schema_without_schema_files() {
    let ctx = setup_catalog(vec!["default"]).await;
    let path = "memory:/branch-write";
    ctx.server
        .add_table_with_schema("default", "t", test_schema(), path);
    let branch_schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("value", DataType::Int(IntType::new()))
        .option("target-file-row-num", "2")
        .build()
        .unwrap();
    ctx.server
        .add_table_with_schema("default", "t$branch_dev", branch_schema.clone(), path);
    ctx.server
        .set_table_schema_id("default", "t$branch_dev", branch_schema, 7);
    ctx.server.set_table_uuid("default", "t$branch_dev", "t");
    let main = ctx
        .catalog
        .get_table(&Identifier::new("default", "t"))
        .await
        .unwrap();
    let branch = main.copy_with_branch("dev").await.unwrap();
    assert_eq!(branch.branch(), "dev");
    assert_eq!(branch.schema().id(), 7);
    assert_eq!(branch.schema().fields()[1].name(), "value");
    assert_eq!(branch.location(), main.location());
    assert!(branch.schema_manager().latest().await.unwrap().is_none());
    let mut writer = branch.new_write_builder().new_write().unwrap();
    let data = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int32Array::from(vec![1])) as arrow_array::ArrayRef,
        ),
        (
            "value",
            Arc::new(Int32Array::from(vec![10])) as arrow_array::ArrayRef,
        ),
    ])
    .unwrap();
    writer.write_arrow_batch(&data).await.unwrap();
    let messages = writer.prepare_commit().await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].new_files[0].schema_id, 7);
    // Branch resolution must retain the REST environment so switching back
    // loads the catalog's main schema instead of looking for a schema file.
    let main_again = branch.copy_with_branch("main").await.unwrap();
    assert_eq!(main_again.branch(), "main");
    assert_eq!(main_again.schema().id(), 0);
    assert_eq!(main_again.schema().fields()[1].name(), "name");
    assert!(main.copy_with_branch("missing").await.is_err());
}

#[tokio::test]
async fn test_branch_write_copy_rejects_replaced_identity_or_location() {
    let ctx = setup_catalog(vec!["default"]).await;
    let path = "memory:/branch-identity";
    ctx.server
        .add_table_with_schema("default", "t", test_schema(), path);
    ctx.server
        .add_table_with_schema("default", "t$branch_dev", test_schema(), path);
    ctx.server.set_table_uuid("default", "t$branch_dev", "t");
    let main = ctx
        .catalog
        .get_table(&Identifier::new("default", "t"))
        .await
        .unwrap();
    main.copy_with_branch("dev").await.unwrap();
    ctx.server
        .set_table_uuid("default", "t$branch_dev", "recreated-table");
    let error = main.copy_with_branch("dev").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no longer belongs to the loaded table"),
        "{error}"
    );
    ctx.server.add_table_with_schema(
        "default",
        "t$branch_dev",
        test_schema(),
        "memory:/replacement",
    );
    ctx.server.set_table_uuid("default", "t$branch_dev", "t");
    let error = main.copy_with_branch("dev").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no longer belongs to the loaded table"),
        "{error}"
    );
}
