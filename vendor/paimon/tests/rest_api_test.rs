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

//! Integration tests for REST API.
//!
//! These tests use a mock server to verify the REST API client behavior.
//! Both the mock server and API client run asynchronously using tokio.

use std::collections::HashMap;

use axum::http::StatusCode;
use paimon::api::auth::{DLFECSTokenLoader, DLFToken, DLFTokenLoader};
use paimon::api::rest_api::RESTApi;
use paimon::api::{
    ColumnMask, ConfigResponse, CreatePartitionsRequest, DataPolicy, DropPartitionsRequest,
    ErrorResponse, ListPermissionsRequest, ListPoliciesRequest, PermissionAssignment,
    PermissionColumns, PermissionResource, PolicyType, RestError, RowFilter,
};
use paimon::catalog::{Function, FunctionDefinition, Identifier, ViewSchema};
use paimon::common::Options;
use paimon::spec::DataField;
use serde_json::json;

mod mock_server;
use mock_server::{start_mock_server, RESTServer};
/// Helper struct to hold test resources.
struct TestContext {
    server: RESTServer,
    api: RESTApi,
    url: String,
}

/// Helper function to set up a test environment with a custom prefix.
async fn setup_test_server(initial_dbs: Vec<&str>) -> TestContext {
    let prefix = "mock-test";
    // Create config with prefix
    let mut defaults = HashMap::new();
    defaults.insert("prefix".to_string(), prefix.to_string());
    let config = ConfigResponse::new(defaults);

    let initial: Vec<String> = initial_dbs.iter().map(|s| s.to_string()).collect();
    // Start server with config
    let server = start_mock_server(
        "test_warehouse".to_string(),      // warehouse
        "/tmp/test_warehouse".to_string(), // data_path
        config,
        initial,
    )
    .await;
    let token = "test_token";
    let url = server.url().expect("Failed to get server URL");
    let mut options = Options::new();
    options.set("uri", &url);
    options.set("warehouse", "test_warehouse");
    options.set("token.provider", "bear");
    options.set("token", token);

    let api = RESTApi::new(options, true)
        .await
        .expect("Failed to create RESTApi");

    TestContext { server, api, url }
}

async fn setup_partition_api() -> (TestContext, Identifier) {
    let ctx = setup_test_server(vec!["default"]).await;
    let identifier = Identifier::new("default", "managed_table");
    ctx.server.add_table("default", "managed_table");
    (ctx, identifier)
}

// ==================== Tag Tests ====================
#[tokio::test]
async fn test_create_tag_with_retention() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server.add_table("default", "managed_table");
    let identifier = Identifier::new("default", "managed_table");
    for (name, snapshot_id, retention) in [
        ("explicit", Some(1), Some("1d")),
        ("latest", None, Some(" 12 HOURS ")),
        ("nano", Some(1), Some("1ns")),
        ("plain", None, None),
    ] {
        ctx.api
            .create_tag_with_retention(&identifier, name, snapshot_id, retention)
            .await
            .unwrap();
        let response = ctx.api.get_tag(&identifier, name).await.unwrap();
        assert_eq!(response.snapshot.id(), 1);
        assert_eq!(response.tag_time_retained.as_deref(), retention);
    }
    ctx.api
        .create_tag(&identifier, "legacy", Some(1))
        .await
        .unwrap();
    assert!(ctx
        .api
        .get_tag(&identifier, "legacy")
        .await
        .unwrap()
        .tag_time_retained
        .is_none());
}

// ==================== Database Tests ====================
#[tokio::test]
async fn test_list_databases() {
    let ctx = setup_test_server(vec!["default", "test_db1", "prod_db"]).await;

    let dbs = ctx.api.list_databases().await.unwrap();

    assert!(dbs.contains(&"default".to_string()));
    assert!(dbs.contains(&"test_db1".to_string()));
    assert!(dbs.contains(&"prod_db".to_string()));
}

#[tokio::test]
async fn test_get_view() {
    let ctx = setup_test_server(vec!["default"]).await;
    let schema: ViewSchema = serde_json::from_value(json!({
        "fields": [{"id": 0, "name": "id", "type": "INT"}],
        "query": "SELECT id FROM source",
        "dialects": {"datafusion": "SELECT id FROM source WHERE id > 0"},
        "comment": null,
        "options": {}
    }))
    .unwrap();
    ctx.server.add_view("default", "active_ids", schema);

    let response = ctx
        .api
        .get_view(&Identifier::new("default", "active_ids"))
        .await
        .unwrap();

    assert_eq!(response.name.as_deref(), Some("active_ids"));
    assert_eq!(response.id.as_deref(), Some("active_ids"));
    assert_eq!(
        response.schema.query_for("datafusion"),
        "SELECT id FROM source WHERE id > 0"
    );
}

#[tokio::test]
async fn test_create_view() {
    let ctx = setup_test_server(vec!["default"]).await;
    let schema = ViewSchema::new(
        serde_json::from_value(json!([
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

    ctx.api.create_view(&identifier, schema).await.unwrap();

    let response = ctx.api.get_view(&identifier).await.unwrap();
    assert_eq!(response.schema.query(), "SELECT id FROM source");
}

#[tokio::test]
async fn test_drop_view_uses_encoded_individual_view_path() {
    let database = "db+%";
    let view = "active+?#%";
    let ctx = setup_test_server(vec![database]).await;
    let schema = ViewSchema::new(
        Vec::new(),
        "SELECT 1".to_string(),
        HashMap::new(),
        None,
        HashMap::new(),
    );
    let identifier = Identifier::new(database, view);
    ctx.api.create_view(&identifier, schema).await.unwrap();

    ctx.api.drop_view(&identifier).await.unwrap();

    assert!(matches!(
        ctx.api.get_view(&identifier).await.unwrap_err(),
        paimon::Error::RestApi {
            source: paimon::api::RestError::NoSuchResource { .. }
        }
    ));
    assert!(matches!(
        ctx.api.drop_view(&identifier).await.unwrap_err(),
        paimon::Error::RestApi {
            source: paimon::api::RestError::NoSuchResource { .. }
        }
    ));
}

#[tokio::test]
async fn test_list_views() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server.set_list_page_size(1);
    let schema: ViewSchema = serde_json::from_value(json!({
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
        ctx.api.list_views("default").await.unwrap(),
        vec!["v1", "v2"]
    );
}

#[tokio::test]
async fn test_get_function() {
    let ctx = setup_test_server(vec!["default"]).await;
    let input_params: Vec<DataField> = serde_json::from_value(json!([
        {"id": 0, "name": "length", "type": "DOUBLE"},
        {"id": 1, "name": "width", "type": "DOUBLE"}
    ]))
    .unwrap();
    let return_params: Vec<DataField> = serde_json::from_value(json!([
        {"id": 0, "name": "area", "type": "DOUBLE"}
    ]))
    .unwrap();
    ctx.server.add_function(Function::new(
        Identifier::new("default", "area"),
        Some(input_params),
        Some(return_params),
        true,
        HashMap::from([(
            "datafusion".to_string(),
            FunctionDefinition::Sql {
                definition: "length * width".to_string(),
            },
        )]),
        None,
        HashMap::new(),
    ));

    let response = ctx
        .api
        .get_function(&Identifier::new("default", "area"))
        .await
        .unwrap();

    assert_eq!(response.name.as_deref(), Some("area"));
    assert_eq!(
        response
            .definitions
            .get("datafusion")
            .and_then(FunctionDefinition::sql),
        Some("length * width")
    );
}

#[tokio::test]
async fn test_list_functions() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server.set_list_page_size(1);
    for name in ["zeta", "alpha"] {
        ctx.server.add_function(Function::new(
            Identifier::new("default", name),
            Some(Vec::new()),
            Some(
                serde_json::from_value(json!([
                    {"id": 0, "name": "result", "type": "INT"}
                ]))
                .unwrap(),
            ),
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
        ctx.api.list_functions("default").await.unwrap(),
        vec!["alpha", "zeta"]
    );
}

#[tokio::test]
async fn test_create_function() {
    let ctx = setup_test_server(vec!["default"]).await;
    let function = Function::new(
        Identifier::new("default", "plus_one"),
        Some(
            serde_json::from_value(json!([
                {"id": 0, "name": "x", "type": "BIGINT"}
            ]))
            .unwrap(),
        ),
        Some(
            serde_json::from_value(json!([
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

    ctx.api.create_function(&function).await.unwrap();

    let response = ctx.api.get_function(function.identifier()).await.unwrap();
    assert_eq!(response.name.as_deref(), Some("plus_one"));
    assert_eq!(response.input_params.unwrap()[0].name(), "x");
}

#[tokio::test]
async fn test_create_database() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Create new database
    let result = ctx.api.create_database("new_db", None).await;
    assert!(result.is_ok(), "failed to create database: {result:?}");

    // Verify creation
    let dbs = ctx.api.list_databases().await.unwrap();
    assert!(dbs.contains(&"new_db".to_string()));

    // Duplicate creation should fail
    let result = ctx.api.create_database("new_db", None).await;
    assert!(result.is_err(), "creating duplicate database should fail");
}

#[tokio::test]
async fn test_get_database() {
    let ctx = setup_test_server(vec!["default"]).await;

    let db_resp = ctx.api.get_database("default").await.unwrap();
    assert_eq!(db_resp.name, Some("default".to_string()));
}

#[tokio::test]
async fn test_error_responses_status_mapping() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Add no-permission database
    ctx.server.add_no_permission_database("secret");

    // GET on no-permission database -> 403
    // Use the prefix from config (v1/mock-test)
    let url = format!("{}/v1/mock-test/databases/{}", ctx.url, "secret");
    let result = reqwest::get(&url).await;
    match result {
        Ok(resp) => {
            assert_eq!(resp.status(), 403);
            let j: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(
                j.get("resourceType").and_then(|v| v.as_str()),
                Some("database")
            );
            assert_eq!(
                j.get("resourceName").and_then(|v| v.as_str()),
                Some("secret")
            );
            assert_eq!(j.get("code").and_then(|v| v.as_u64()), Some(403));
        }
        Err(e) => panic!("Expected 403 response, got error: {e:?}"),
    }

    // POST create existing database -> 409
    let body = json!({"name": "default", "properties": {}});
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("{}/v1/mock-test/databases", ctx.url))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);

    let j2: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        j2.get("resourceType").and_then(|v| v.as_str()),
        Some("database")
    );
    assert_eq!(
        j2.get("resourceName").and_then(|v| v.as_str()),
        Some("default")
    );
    assert_eq!(j2.get("code").and_then(|v| v.as_u64()), Some(409));
}

#[tokio::test]
async fn test_alter_database() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Alter database with updates
    let mut updates = HashMap::new();
    updates.insert("key1".to_string(), "value1".to_string());
    updates.insert("key2".to_string(), "value2".to_string());

    let result = ctx.api.alter_database("default", vec![], updates).await;
    assert!(result.is_ok(), "failed to alter database: {result:?}");

    // Verify the updates by getting the database
    let db_resp = ctx.api.get_database("default").await.unwrap();
    assert_eq!(db_resp.options.get("key1"), Some(&"value1".to_string()));
    assert_eq!(db_resp.options.get("key2"), Some(&"value2".to_string()));

    // Alter database with removals
    let result = ctx
        .api
        .alter_database("default", vec!["key1".to_string()], HashMap::new())
        .await;
    assert!(result.is_ok(), "failed to remove key: {result:?}");

    let db_resp = ctx.api.get_database("default").await.unwrap();
    assert!(!db_resp.options.contains_key("key1"));
    assert_eq!(db_resp.options.get("key2"), Some(&"value2".to_string()));
}

#[tokio::test]
async fn test_alter_database_not_found() {
    let ctx = setup_test_server(vec!["default"]).await;

    let result = ctx
        .api
        .alter_database("non_existent", vec![], HashMap::new())
        .await;
    assert!(
        result.is_err(),
        "altering non-existent database should fail"
    );
}

#[tokio::test]
async fn test_drop_database() {
    let ctx = setup_test_server(vec!["default", "to_drop"]).await;

    // Verify database exists
    let dbs = ctx.api.list_databases().await.unwrap();
    assert!(dbs.contains(&"to_drop".to_string()));

    // Drop database
    let result = ctx.api.drop_database("to_drop").await;
    assert!(result.is_ok(), "failed to drop database: {result:?}");

    // Verify database is gone
    let dbs = ctx.api.list_databases().await.unwrap();
    assert!(!dbs.contains(&"to_drop".to_string()));

    // Dropping non-existent database should fail
    let result = ctx.api.drop_database("to_drop").await;
    assert!(
        result.is_err(),
        "dropping non-existent database should fail"
    );
}

#[tokio::test]
async fn test_drop_database_no_permission() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server.add_no_permission_database("secret");

    let result = ctx.api.drop_database("secret").await;
    assert!(
        result.is_err(),
        "dropping no-permission database should fail"
    );
}
// ==================== Table Tests ====================

#[tokio::test]
async fn test_list_tables_and_get_table() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Add tables
    ctx.server.add_table("default", "table1");
    ctx.server.add_table("default", "table2");

    // List tables
    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(tables.contains(&"table1".to_string()));
    assert!(tables.contains(&"table2".to_string()));

    // Get table
    let table_resp = ctx
        .api
        .get_table(&Identifier::new("default", "table1"))
        .await
        .unwrap();
    assert_eq!(table_resp.id.unwrap_or_default(), "table1");
}

#[tokio::test]
async fn test_get_table_not_found() {
    let ctx = setup_test_server(vec!["default"]).await;

    let result = ctx
        .api
        .get_table(&Identifier::new("default", "non_existent_table"))
        .await;
    assert!(result.is_err(), "getting non-existent table should fail");
}

#[tokio::test]
async fn test_list_tables_empty_database() {
    let ctx = setup_test_server(vec!["default"]).await;

    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(
        tables.is_empty(),
        "expected empty tables list, got: {tables:?}"
    );
}

#[tokio::test]
async fn test_multiple_databases_with_tables() {
    let ctx = setup_test_server(vec!["db1", "db2"]).await;

    // Add tables to different databases
    ctx.server.add_table("db1", "table1_db1");
    ctx.server.add_table("db1", "table2_db1");
    ctx.server.add_table("db2", "table1_db2");

    // Verify db1 tables
    let tables_db1 = ctx.api.list_tables("db1").await.unwrap();
    assert_eq!(tables_db1.len(), 2);
    assert!(tables_db1.contains(&"table1_db1".to_string()));
    assert!(tables_db1.contains(&"table2_db1".to_string()));

    // Verify db2 tables
    let tables_db2 = ctx.api.list_tables("db2").await.unwrap();
    assert_eq!(tables_db2.len(), 1);
    assert!(tables_db2.contains(&"table1_db2".to_string()));
}

#[tokio::test]
async fn test_create_table() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Create a simple schema using builder
    use paimon::spec::{DataType, Schema};
    let schema = Schema::builder()
        .column("id", DataType::BigInt(paimon::spec::BigIntType::new()))
        .column(
            "name",
            DataType::VarChar(paimon::spec::VarCharType::new(255).unwrap()),
        )
        .build()
        .expect("Failed to build schema");

    let result = ctx
        .api
        .create_table(&Identifier::new("default", "new_table"), schema)
        .await;
    assert!(result.is_ok(), "failed to create table: {result:?}");

    // Verify table exists
    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(tables.contains(&"new_table".to_string()));

    // Get the table
    let table_resp = ctx
        .api
        .get_table(&Identifier::new("default", "new_table"))
        .await
        .unwrap();
    assert_eq!(table_resp.name, Some("new_table".to_string()));
}

#[tokio::test]
async fn test_drop_table() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Add a table
    ctx.server.add_table("default", "table_to_drop");

    // Verify table exists
    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(tables.contains(&"table_to_drop".to_string()));

    // Drop table
    let result = ctx
        .api
        .drop_table(&Identifier::new("default", "table_to_drop"))
        .await;
    assert!(result.is_ok(), "failed to drop table: {result:?}");

    // Verify table is gone
    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(!tables.contains(&"table_to_drop".to_string()));

    // Dropping non-existent table should fail
    let result = ctx
        .api
        .drop_table(&Identifier::new("default", "table_to_drop"))
        .await;
    assert!(result.is_err(), "dropping non-existent table should fail");
}

#[tokio::test]
async fn test_drop_table_no_permission() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server
        .add_no_permission_table("default", "secret_table");

    let result = ctx
        .api
        .drop_table(&Identifier::new("default", "secret_table"))
        .await;
    assert!(result.is_err(), "dropping no-permission table should fail");
}

// ==================== Partition Tests ====================

#[tokio::test]
async fn test_partition_mutations_post_expected_requests() {
    let (ctx, identifier) = setup_partition_api().await;
    let partition_specs = vec![HashMap::from([
        ("dt".to_string(), "2026-07-22".to_string()),
        ("hour".to_string(), "10".to_string()),
    ])];

    ctx.api
        .create_partitions(&identifier, partition_specs.clone(), false)
        .await
        .unwrap();

    assert_eq!(
        ctx.server.create_partitions_calls(),
        vec![(
            "default".to_string(),
            "managed_table".to_string(),
            CreatePartitionsRequest::new(partition_specs.clone(), false),
        )]
    );

    ctx.api
        .drop_partitions(&identifier, partition_specs.clone(), false)
        .await
        .unwrap();

    assert_eq!(
        ctx.server.drop_partitions_calls(),
        vec![(
            "default".to_string(),
            "managed_table".to_string(),
            DropPartitionsRequest::new(partition_specs, false),
        )]
    );
}

#[tokio::test]
async fn test_list_partitions_by_names_returns_the_registered_ones() {
    let (ctx, identifier) = setup_partition_api().await;
    let registered = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    let missing = HashMap::from([("dt".to_string(), "2026-07-23".to_string())]);
    ctx.server
        .set_table_partitions("default", "managed_table", vec![registered.clone()]);

    let partitions = ctx
        .api
        .list_partitions_by_names(&identifier, vec![registered.clone(), missing.clone()])
        .await
        .unwrap();

    assert_eq!(
        partitions
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        vec![registered.clone()]
    );
    assert_eq!(
        ctx.server
            .table_partition_list_by_names_calls("default", "managed_table"),
        vec![vec![registered, missing]]
    );
}

#[tokio::test]
async fn test_list_partitions_by_filter_sends_filter_pattern_and_page_size() {
    let (ctx, identifier) = setup_partition_api().await;
    let wanted = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    ctx.server.set_table_partitions(
        "default",
        "managed_table",
        vec![
            wanted.clone(),
            HashMap::from([("dt".to_string(), "2026-07-23".to_string())]),
        ],
    );
    let filter = r#"{"kind":"LEAF","transform":{"name":"FIELD_REF","fieldRef":{"index":0,"name":"dt","type":"STRING"}},"function":"EQUAL","literals":["2026-07-22"]}"#;

    let partitions = ctx
        .api
        .list_partitions_by_filter(&identifier, filter, Some("dt=2026-07-22"))
        .await
        .unwrap();

    assert_eq!(
        partitions
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        vec![wanted]
    );
    let requests = ctx
        .server
        .table_partition_list_by_filter_requests("default", "managed_table");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].filter, filter);
    assert_eq!(
        requests[0].partition_name_pattern.as_deref(),
        Some("dt=2026-07-22")
    );
    assert_eq!(requests[0].max_results, Some(1000));
    assert_eq!(requests[0].page_token, None);
}

#[tokio::test]
async fn test_list_partitions_by_filter_surfaces_not_implemented() {
    let (ctx, identifier) = setup_partition_api().await;
    ctx.server
        .set_list_partitions_by_filter_error_status(Some(axum::http::StatusCode::NOT_IMPLEMENTED));

    let error = ctx
        .api
        .list_partitions_by_filter(&identifier, "{}", None)
        .await
        .unwrap_err();

    assert!(
        matches!(
            error,
            paimon::Error::RestApi {
                source: paimon::api::RestError::NotImplemented { .. }
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn test_list_partitions_by_name_pattern_sends_the_pattern() {
    let (ctx, identifier) = setup_partition_api().await;
    let wanted = HashMap::from([
        ("dt".to_string(), "2026-07-22".to_string()),
        ("hour".to_string(), "10".to_string()),
    ]);
    ctx.server.set_table_partitions(
        "default",
        "managed_table",
        vec![
            wanted.clone(),
            HashMap::from([
                ("dt".to_string(), "2026-07-23".to_string()),
                ("hour".to_string(), "10".to_string()),
            ]),
        ],
    );

    let partitions = ctx
        .api
        .list_partitions_by_name_pattern(&identifier, Some("dt=2026-07-22/%"))
        .await
        .unwrap();
    ctx.api.list_partitions(&identifier).await.unwrap();

    assert_eq!(
        partitions
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        vec![wanted]
    );
    assert_eq!(
        ctx.server
            .table_partition_list_name_patterns("default", "managed_table"),
        vec![Some("dt=2026-07-22/%".to_string()), None]
    );
}

#[tokio::test]
async fn test_list_partitions_follows_non_empty_token_after_empty_page() {
    let (ctx, identifier) = setup_partition_api().await;
    let expected = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    ctx.server.set_table_partition_page_responses(
        "default",
        "managed_table",
        vec![
            (Vec::new(), Some("1".to_string())),
            (vec![expected.clone()], None),
        ],
    );

    let partitions = ctx.api.list_partitions(&identifier).await.unwrap();

    assert_eq!(partitions.len(), 1);
    assert_eq!(partitions[0].spec, expected);
}

#[tokio::test]
async fn test_list_partitions_stops_on_empty_next_page_token() {
    let (ctx, identifier) = setup_partition_api().await;
    let expected = HashMap::from([("dt".to_string(), "2026-07-22".to_string())]);
    let unexpected = HashMap::from([("dt".to_string(), "2026-07-23".to_string())]);
    ctx.server.set_table_partition_page_responses(
        "default",
        "managed_table",
        vec![
            (vec![expected.clone()], Some(String::new())),
            (vec![unexpected], None),
        ],
    );

    let partitions = ctx.api.list_partitions(&identifier).await.unwrap();

    assert_eq!(
        partitions
            .into_iter()
            .map(|partition| partition.spec)
            .collect::<Vec<_>>(),
        vec![expected]
    );
    assert_eq!(
        ctx.server
            .table_partition_list_call_count("default", "managed_table"),
        1
    );
}

#[tokio::test]
async fn test_list_partitions_rejects_repeated_page_token() {
    let (ctx, identifier) = setup_partition_api().await;
    ctx.server.set_table_partition_page_responses(
        "default",
        "managed_table",
        vec![
            (
                vec![HashMap::from([(
                    "dt".to_string(),
                    "2026-07-20".to_string(),
                )])],
                Some("a".to_string()),
            ),
            (
                vec![HashMap::from([(
                    "dt".to_string(),
                    "2026-07-21".to_string(),
                )])],
                Some("b".to_string()),
            ),
            (
                vec![HashMap::from([(
                    "dt".to_string(),
                    "2026-07-22".to_string(),
                )])],
                Some("a".to_string()),
            ),
        ],
    );

    let error = ctx.api.list_partitions(&identifier).await.unwrap_err();

    let paimon::Error::UnexpectedError { message, .. } = error else {
        panic!("expected a repeated-page-token error, got: {error}");
    };
    assert_eq!(
        message,
        "REST catalog returned partition page token 'a' more than once for table \
         default.managed_table"
    );
    assert_eq!(
        ctx.server
            .table_partition_list_call_count("default", "managed_table"),
        3
    );
}

// ==================== Permission Management Tests ====================

fn orders_table() -> PermissionResource {
    PermissionResource::table("sales", "orders")
}

fn assignment(access: &str, principal: &str) -> PermissionAssignment {
    PermissionAssignment::new(orders_table(), access, principal, None, None).unwrap()
}

#[tokio::test]
async fn test_list_permissions_sends_every_filter_and_parses_the_page() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.api
        .grant_permission(&assignment("SELECT", "analyst"))
        .await
        .unwrap();
    ctx.api
        .grant_permission(&assignment("UPDATE", "writer"))
        .await
        .unwrap();

    let mut request = ListPermissionsRequest::new(orders_table());
    request.principal = Some("analyst".to_string());
    request.access = Some("select".to_string());
    request.max_results = Some(25);
    request.page_token = Some("0".to_string());
    let page = ctx.api.list_permissions_paged(&request).await.unwrap();

    assert_eq!(page.elements, vec![assignment("SELECT", "analyst")]);
    assert_eq!(page.next_page_token, None);
    assert_eq!(
        ctx.server.list_permissions_queries(),
        vec![HashMap::from([
            ("resourceType".to_string(), "TABLE".to_string()),
            ("database".to_string(), "sales".to_string()),
            ("table".to_string(), "orders".to_string()),
            ("principal".to_string(), "analyst".to_string()),
            ("access".to_string(), "SELECT".to_string()),
            ("maxResults".to_string(), "25".to_string()),
            ("pageToken".to_string(), "0".to_string()),
        ])]
    );
}

#[tokio::test]
async fn test_list_permissions_pages_with_the_server_token() {
    let ctx = setup_test_server(vec!["default"]).await;
    for principal in ["a", "b", "c"] {
        ctx.api
            .grant_permission(&assignment("SELECT", principal))
            .await
            .unwrap();
    }
    let mut request = ListPermissionsRequest::new(orders_table());
    request.max_results = Some(2);
    let first = ctx.api.list_permissions_paged(&request).await.unwrap();
    assert_eq!(first.elements.len(), 2);
    let token = first.next_page_token.expect("a second page");
    request.page_token = Some(token);
    let second = ctx.api.list_permissions_paged(&request).await.unwrap();
    assert_eq!(second.elements, vec![assignment("SELECT", "c")]);
    assert_eq!(second.next_page_token, None);
}

#[tokio::test]
async fn test_grant_and_revoke_post_the_java_wire_shapes() {
    let ctx = setup_test_server(vec!["default"]).await;
    let granted = PermissionAssignment::new(
        orders_table(),
        "select",
        "analyst",
        None,
        Some("2027-01-01T00:00:00Z"),
    )
    .unwrap();
    ctx.api.grant_permission(&granted).await.unwrap();
    // Granting the same identity again replaces the expiry instead of adding a row.
    ctx.api
        .grant_permission(&assignment("SELECT", "analyst"))
        .await
        .unwrap();
    assert_eq!(
        ctx.server.permissions(),
        vec![assignment("SELECT", "analyst")]
    );

    ctx.api
        .revoke_permission(&orders_table(), "select", "analyst")
        .await
        .unwrap();
    assert!(ctx.server.permissions().is_empty());

    assert_eq!(
        ctx.server.grant_permission_bodies()[0],
        json!({
            "resource": {"type": "TABLE", "database": "sales", "table": "orders"},
            "access": "SELECT",
            "principal": "analyst",
            "expireTime": "2027-01-01T00:00:00Z"
        })
    );
    assert_eq!(
        ctx.server.revoke_permission_bodies(),
        vec![json!({
            "resource": {"type": "TABLE", "database": "sales", "table": "orders"},
            "access": "SELECT",
            "principal": "analyst"
        })]
    );
}

#[tokio::test]
async fn test_column_grant_carries_the_range_but_revoke_only_the_identity() {
    let ctx = setup_test_server(vec!["default"]).await;
    let columns = PermissionColumns::names(vec!["id".to_string(), "region".to_string()]).unwrap();
    let granted = PermissionAssignment::new(
        PermissionResource::column("sales", "orders"),
        "SELECT",
        "analyst",
        Some(columns),
        None,
    )
    .unwrap();
    ctx.api.grant_permission(&granted).await.unwrap();
    ctx.api
        .revoke_permission(granted.resource(), granted.access(), granted.principal())
        .await
        .unwrap();

    let grant = &ctx.server.grant_permission_bodies()[0];
    assert_eq!(grant["resource"]["type"], "COLUMN");
    assert_eq!(grant["columns"], json!({"columnNames": ["id", "region"]}));
    let revoke = &ctx.server.revoke_permission_bodies()[0];
    assert_eq!(revoke["resource"]["type"], "COLUMN");
    assert!(revoke.get("columns").is_none());
    assert!(revoke.get("expireTime").is_none());
}

#[tokio::test]
async fn test_forbidden_grant_surfaces_the_rest_error() {
    let ctx = setup_test_server(vec!["default"]).await;
    ctx.server
        .set_grant_permission_error_status(Some(StatusCode::FORBIDDEN));
    let error = ctx
        .api
        .grant_permission(&assignment("SELECT", "denied"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            paimon::Error::RestApi {
                source: RestError::Forbidden { .. }
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn test_revoking_an_absent_assignment_is_idempotent() {
    let ctx = setup_test_server(vec!["default"]).await;
    for _ in 0..2 {
        ctx.api
            .revoke_permission(&orders_table(), "SELECT", "missing")
            .await
            .unwrap();
    }
    assert_eq!(ctx.server.revoke_permission_bodies().len(), 2);
}

#[tokio::test]
async fn test_invalid_permission_requests_never_reach_the_server() {
    let ctx = setup_test_server(vec!["default"]).await;
    let error = ctx
        .api
        .revoke_permission(&PermissionResource::catalog(), "SELECT", "analyst")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not valid for CATALOG"),
        "{error}"
    );
    let mut request = ListPermissionsRequest::new(orders_table());
    request.max_results = Some(1001);
    let error = ctx.api.list_permissions_paged(&request).await.unwrap_err();
    assert!(error.to_string().contains("1000"), "{error}");
    assert!(ctx.server.revoke_permission_bodies().is_empty());
    assert!(ctx.server.list_permissions_queries().is_empty());
}

#[tokio::test]
async fn test_grant_sends_the_canonical_form_of_a_listed_assignment() {
    let ctx = setup_test_server(vec!["default"]).await;
    let listed: PermissionAssignment = serde_json::from_value(json!({
        "resource": {"type": "TABLE", "database": "sales", "table": "orders", "view": ""},
        "access": "select",
        "principal": "analyst",
    }))
    .unwrap();
    ctx.api.grant_permission(&listed).await.unwrap();
    assert_eq!(
        ctx.server.grant_permission_bodies(),
        vec![json!({
            "resource": {"type": "TABLE", "database": "sales", "table": "orders"},
            "access": "SELECT",
            "principal": "analyst"
        })]
    );

    let mut request = ListPermissionsRequest::new(listed.resource().clone());
    request.access = Some("select".to_string());
    ctx.api.list_permissions_paged(&request).await.unwrap();
    assert_eq!(
        ctx.server.list_permissions_queries(),
        vec![HashMap::from([
            ("resourceType".to_string(), "TABLE".to_string()),
            ("database".to_string(), "sales".to_string()),
            ("table".to_string(), "orders".to_string()),
            ("access".to_string(), "SELECT".to_string()),
        ])]
    );
}

#[tokio::test]
async fn test_a_resource_no_constructor_could_have_built_never_reaches_the_server() {
    let ctx = setup_test_server(vec!["default"]).await;
    let blank = PermissionResource::table("sales", "");
    let assignment: PermissionAssignment = serde_json::from_value(json!({
        "resource": {"type": "TABLE", "database": "sales", "table": ""},
        "access": "SELECT",
        "principal": "analyst",
    }))
    .unwrap();
    let rejected = |error: paimon::Error| {
        assert!(
            error.to_string().contains("table is required for TABLE"),
            "{error}"
        );
    };
    rejected(ctx.api.grant_permission(&assignment).await.unwrap_err());
    rejected(
        ctx.api
            .revoke_permission(&blank, "SELECT", "analyst")
            .await
            .unwrap_err(),
    );
    rejected(
        ctx.api
            .list_permissions_paged(&ListPermissionsRequest::new(blank))
            .await
            .unwrap_err(),
    );
    assert!(ctx.server.grant_permission_bodies().is_empty());
    assert!(ctx.server.revoke_permission_bodies().is_empty());
    assert!(ctx.server.list_permissions_queries().is_empty());
}

// ==================== Rename Table Tests ====================

#[tokio::test]
async fn test_rename_table() {
    let ctx = setup_test_server(vec!["default"]).await;

    // Add a table
    ctx.server.add_table("default", "old_table");

    // Rename table
    let result = ctx
        .api
        .rename_table(
            &Identifier::new("default", "old_table"),
            &Identifier::new("default", "new_table"),
        )
        .await;
    assert!(result.is_ok(), "failed to rename table: {result:?}");

    // Verify old table is gone
    let tables = ctx.api.list_tables("default").await.unwrap();
    assert!(!tables.contains(&"old_table".to_string()));

    // Verify new table exists
    assert!(tables.contains(&"new_table".to_string()));

    // Get the renamed table
    let table_resp = ctx
        .api
        .get_table(&Identifier::new("default", "new_table"))
        .await
        .unwrap();
    assert_eq!(table_resp.name, Some("new_table".to_string()));
}

// ==================== Token Loader Tests ====================

#[tokio::test]
async fn test_ecs_loader_token() {
    let prefix = "mock-test";
    let mut defaults = HashMap::new();
    defaults.insert("prefix".to_string(), prefix.to_string());
    let config = ConfigResponse::new(defaults);

    let initial: Vec<String> = vec!["default".to_string()];
    let server = start_mock_server(
        "test_warehouse".to_string(),
        "/tmp/test_warehouse".to_string(),
        config,
        initial,
    )
    .await;

    let role_name = "test_role";
    let token_json = json!({
        "AccessKeyId": "AccessKeyId",
        "AccessKeySecret": "AccessKeySecret",
        "SecurityToken": "AQoDYXdzEJr...<remainder of security token>",
        "Expiration": "2023-12-01T12:00:00Z"
    });

    server.set_ecs_metadata(role_name, token_json.clone());

    let ecs_metadata_url = format!("{}/ram/security-credentials/", server.url().unwrap());

    // Test without role name
    let loader = DLFECSTokenLoader::new(&ecs_metadata_url, None);
    let load_token: DLFToken = loader.load_token().await.unwrap();

    assert_eq!(load_token.access_key_id, "AccessKeyId");
    assert_eq!(load_token.access_key_secret, "AccessKeySecret");
    assert_eq!(
        load_token.security_token,
        Some("AQoDYXdzEJr...<remainder of security token>".to_string())
    );
    assert_eq!(
        load_token.expiration,
        Some("2023-12-01T12:00:00Z".to_string())
    );
    assert_eq!(
        load_token.expiration_at_millis,
        DLFToken::parse_expiration_to_millis("2023-12-01T12:00:00Z")
    );

    // Test with role name
    let loader_with_role = DLFECSTokenLoader::new(&ecs_metadata_url, Some(role_name.to_string()));
    let token: DLFToken = loader_with_role.load_token().await.unwrap();

    assert_eq!(token.access_key_id, "AccessKeyId");
    assert_eq!(token.access_key_secret, "AccessKeySecret");
    assert_eq!(
        token.security_token,
        Some("AQoDYXdzEJr...<remainder of security token>".to_string())
    );
    assert_eq!(token.expiration, Some("2023-12-01T12:00:00Z".to_string()));

    let invalid_token_json = json!({
        "AccessKeyId": "AccessKeyId",
        "AccessKeySecret": "AccessKeySecret",
        "SecurityToken": "token",
        "Expiration": "invalid-expiration"
    });
    server.set_ecs_metadata(role_name, invalid_token_json);
    let error = loader_with_role.load_token().await.unwrap_err();
    assert!(error
        .to_string()
        .contains("Failed to parse token Expiration"));
}

// ==================== Policy Management Tests ====================

const PREDICATE_JSON: &str = r#"{"kind":"LEAF","transform":{"name":"FIELD_REF","fieldRef":{"index":0,"name":"region","type":"STRING"}},"function":"EQUAL","literals":["APAC"]}"#;
const TRANSFORM_JSON: &str =
    r#"{"name":"CONCAT","inputs":[{"index":0,"name":"region","type":"STRING"},"****"]}"#;

fn managed_table() -> PermissionResource {
    PermissionResource::table("default", "managed_table")
}

fn mask_policy() -> DataPolicy {
    DataPolicy::new_column_mask(
        managed_table(),
        ColumnMask::new("email", TRANSFORM_JSON).unwrap(),
        "analyst",
    )
    .unwrap()
}

fn policy_error(resource_type: &str, code: i32) -> ErrorResponse {
    ErrorResponse::new(
        Some(resource_type.to_string()),
        Some("orders".to_string()),
        Some(format!("{resource_type} error")),
        Some(code),
    )
}

#[tokio::test]
async fn test_policies_round_trip_through_the_table_nested_endpoints() {
    let (ctx, _identifier) = setup_partition_api().await;
    let mask = mask_policy();
    let filter = DataPolicy::new_row_filter(
        managed_table(),
        RowFilter::new(PREDICATE_JSON).unwrap(),
        "analyst",
    )
    .unwrap();
    ctx.api.create_policy(&mask).await.unwrap();
    ctx.api.create_policy(&filter).await.unwrap();

    let create = &ctx.server.create_policy_bodies()[0];
    assert_eq!(
        *create,
        json!({"columnMask": {"onColumn": "email", "transform": TRANSFORM_JSON}, "principal": "analyst"})
    );
    assert!(create.get("resource").is_none());

    let mut request = ListPoliciesRequest::new(managed_table());
    request.policy_type = Some(PolicyType::ColumnMasking);
    request.principal = Some("analyst".to_string());
    request.column = Some("email".to_string());
    request.max_results = Some(25);
    request.page_token = Some("0".to_string());
    let page = ctx.api.list_policies_paged(&request).await.unwrap();
    assert_eq!(page.elements, vec![mask]);
    assert_eq!(page.next_page_token, None);
    assert_eq!(
        ctx.server.list_policies_queries(),
        vec![HashMap::from([
            ("type".to_string(), "COLUMN_MASKING".to_string()),
            ("principal".to_string(), "analyst".to_string()),
            ("column".to_string(), "email".to_string()),
            ("maxResults".to_string(), "25".to_string()),
            ("pageToken".to_string(), "0".to_string()),
        ])]
    );

    ctx.api
        .drop_policy(
            &managed_table(),
            PolicyType::ColumnMasking,
            "analyst",
            Some("email"),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        ctx.server.drop_policy_bodies(),
        vec![json!({"type": "COLUMN_MASKING", "principal": "analyst", "column": "email"})]
    );
    let page = ctx
        .api
        .list_policies_paged(&ListPoliciesRequest::new(managed_table()))
        .await
        .unwrap();
    assert_eq!(page.elements, vec![filter]);
}

#[tokio::test]
async fn test_create_policy_surfaces_conflicts_with_their_resource_type() {
    let (ctx, _identifier) = setup_partition_api().await;
    ctx.api.create_policy(&mask_policy()).await.unwrap();
    let error = ctx.api.create_policy(&mask_policy()).await.unwrap_err();
    assert!(
        matches!(&error, paimon::Error::RestApi { source: RestError::AlreadyExists { resource_type: Some(t), .. } } if t == "POLICY"),
        "{error:?}"
    );
    ctx.server
        .set_create_policy_error(Some(policy_error("TABLE", 409)));
    let error = ctx.api.create_policy(&mask_policy()).await.unwrap_err();
    assert!(
        matches!(&error, paimon::Error::RestApi { source: RestError::AlreadyExists { resource_type: Some(t), .. } } if t == "TABLE"),
        "{error:?}"
    );
    // An unknown table is a 404 on the table, not on the policy.
    ctx.server.set_create_policy_error(None);
    let error = ctx
        .api
        .create_policy(
            &DataPolicy::new_column_mask(
                PermissionResource::table("default", "missing"),
                ColumnMask::new("email", "{}").unwrap(),
                "analyst",
            )
            .unwrap(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, paimon::Error::RestApi { source: RestError::NoSuchResource { resource_type: Some(t), .. } } if t == "TABLE"),
        "{error:?}"
    );
}

#[tokio::test]
async fn test_drop_policy_if_exists_ignores_only_a_missing_policy() {
    let (ctx, _identifier) = setup_partition_api().await;
    ctx.api
        .drop_policy(
            &managed_table(),
            PolicyType::ColumnMasking,
            "analyst",
            Some("email"),
            true,
        )
        .await
        .unwrap();
    let error = ctx
        .api
        .drop_policy(
            &managed_table(),
            PolicyType::ColumnMasking,
            "analyst",
            Some("email"),
            false,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, paimon::Error::RestApi { source: RestError::NoSuchResource { resource_type: Some(t), .. } } if t == "POLICY"),
        "{error:?}"
    );
    ctx.server
        .set_drop_policy_error(Some(policy_error("TABLE", 404)));
    let error = ctx
        .api
        .drop_policy(
            &managed_table(),
            PolicyType::ColumnMasking,
            "analyst",
            Some("email"),
            true,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, paimon::Error::RestApi { source: RestError::NoSuchResource { resource_type: Some(t), .. } } if t == "TABLE"),
        "{error:?}"
    );
    assert_eq!(ctx.server.drop_policy_bodies().len(), 3);
}

#[tokio::test]
async fn test_invalid_policy_requests_never_reach_the_server() {
    let (ctx, _identifier) = setup_partition_api().await;
    let error = ctx
        .api
        .drop_policy(
            &managed_table(),
            PolicyType::RowFilter,
            "analyst",
            Some("email"),
            false,
        )
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot contain a column"),
        "{error}"
    );
    let error = ctx
        .api
        .list_policies_paged(&ListPoliciesRequest::new(PermissionResource::catalog()))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("only to TABLE"), "{error}");
    // A blank locator is not a TABLE-only violation, so only the resource rules catch it.
    let blank_table = PermissionResource::table("default", "");
    let error = ctx
        .api
        .list_policies_paged(&ListPoliciesRequest::new(blank_table.clone()))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("table is required for TABLE"),
        "{error}"
    );
    let error = ctx
        .api
        .drop_policy(&blank_table, PolicyType::RowFilter, "analyst", None, false)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("table is required for TABLE"),
        "{error}"
    );
    assert!(ctx.server.create_policy_bodies().is_empty());
    assert!(ctx.server.drop_policy_bodies().is_empty());
    assert!(ctx.server.list_policies_queries().is_empty());
}
