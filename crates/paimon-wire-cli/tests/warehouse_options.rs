//! Catalog options (`--option`, `--options-file`) and warehouses whose storage backend is not
//! compiled in. The S3 side (a real S3Proxy) is `scripts/test-s3`.

mod common;

use common::{failure, run};
#[path = "../../paimon-wire/tests/common/echoing_server.rs"]
mod echoing_server;
use echoing_server::EchoingServer;

fn payload_file(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("payload.bin");
    // Never decoded: every case here fails before reading payloads' content matters.
    std::fs::write(&path, [0u8; 8]).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_backend_not_compiled_in_is_named_with_its_feature() {
    // storage-hdfs is off by default (see README); the default object stores are on.
    let dir = tempfile::tempdir().unwrap();
    let payload = payload_file(&dir);
    let out = run(
        &[
            "validate",
            "--warehouse",
            "hdfs://namenode:8020/warehouse",
            "--table",
            "db.t",
            &payload,
        ],
        None,
    );
    let line = failure(&out, 1);
    assert!(
        line.contains("hdfs:// warehouses is not compiled in") && line.contains("`storage-hdfs`"),
        "{line}"
    );
    assert!(!line.to_lowercase().contains("io error"), "{line}");
}

#[test]
fn an_unknown_scheme_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let payload = payload_file(&dir);
    let out = run(
        &[
            "validate",
            "--warehouse",
            "ftp://host/warehouse",
            "--table",
            "db.t",
            &payload,
        ],
        None,
    );
    let line = failure(&out, 1);
    assert!(line.contains("no storage backend serves ftp://"), "{line}");
}

#[test]
fn malformed_options_are_usage_errors_that_never_echo_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let payload = payload_file(&dir);
    let warehouse = dir.path().to_str().unwrap();
    let options = dir.path().join("options");
    std::fs::write(
        &options,
        "s3.region=us-east-1\ns3.secret-key SUPERSECRET-1\n",
    )
    .unwrap();
    let out = run(
        &[
            "validate",
            "--warehouse",
            warehouse,
            "--table",
            "db.t",
            "--options-file",
            options.to_str().unwrap(),
            &payload,
        ],
        None,
    );
    let line = failure(&out, 2);
    assert!(line.contains("line 2: expected KEY=VALUE"), "{line}");
    assert!(!line.contains("SUPERSECRET"), "{line}");

    let out = run(
        &[
            "validate",
            "--warehouse",
            warehouse,
            "--table",
            "db.t",
            "--option",
            "s3.region=x",
            "--option",
            "SUPERSECRET-2",
            &payload,
        ],
        None,
    );
    let line = failure(&out, 2);
    assert!(
        line.contains("--option number 2: expected KEY=VALUE"),
        "{line}"
    );
    assert!(!line.contains("SUPERSECRET"), "{line}");
}

#[test]
fn demo_takes_catalog_options_and_never_prints_a_secret() {
    // An unknown metastore is refused by the catalog in the demo and in every worker alike;
    // here the demo itself must refuse it, naming the value of a non-secret key.
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let out = run(
        &[
            "demo",
            "--warehouse",
            warehouse.to_str().unwrap(),
            "--workers",
            "2",
            "--rows",
            "10",
            "--option",
            "metastore=no-such-metastore",
        ],
        None,
    );
    let line = failure(&out, 1);
    assert!(line.contains("no-such-metastore"), "{line}");

    // Options that do not change a filesystem warehouse reach the workers and are harmless.
    let out = run(
        &[
            "demo",
            "--warehouse",
            warehouse.to_str().unwrap(),
            "--workers",
            "2",
            "--rows",
            "10",
            "--option",
            "s3.secret-key=SUPERSECRET-3",
        ],
        None,
    );
    let stdout = common::success(&out);
    assert!(stdout.contains("read back      10 rows"), "{stdout}");
    assert!(!stdout.contains("SUPERSECRET"), "{stdout}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("SUPERSECRET"));
}

/// With `metastore=rest` the warehouse is a name the server knows: sent as typed (not made an
/// absolute path), no directory made for it, on `validate` and on the demo. Nothing listens on
/// the URI, so each command fails reaching the server, naming the warehouse as given.
#[test]
fn a_rest_catalog_warehouse_is_a_name_not_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let payload = payload_file(&dir);
    let rest = [
        "--option",
        "metastore=rest",
        "--option",
        "uri=http://127.0.0.1:9",
        "--option",
        "token.provider=bear",
        "--option",
        "token=a-test-token-of-some-length",
    ];
    for command in ["validate", "demo"] {
        let mut args = vec![command, "--warehouse", "my_rest_warehouse"];
        if command == "validate" {
            args.extend(["--table", "db.t"]);
        }
        args.extend(rest);
        if command == "validate" {
            args.push(&payload);
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        assert!(
            stderr.contains("opening the warehouse \"my_rest_warehouse\""),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("a-test-token-of-some-length"), "{stderr}");
        assert!(
            !dir.path().join("my_rest_warehouse").exists(),
            "{command} made a directory for a REST warehouse"
        );
    }

    // A different `warehouse` option is refused by name, before any request.
    let mut args = vec![
        "validate",
        "--warehouse",
        "my_rest_warehouse",
        "--table",
        "db.t",
        "--option",
        "warehouse=another_one",
    ];
    args.extend(rest);
    args.push(&payload);
    let line = failure(&run(&args, None), 1);
    assert!(
        line.contains(
            "two warehouses given: \"my_rest_warehouse\" and the option warehouse=\"another_one\""
        ),
        "{line}"
    );
}

/// A REST catalog server that echoes the caller's bearer token in its error body — raw,
/// JSON-escaped (`\/`, or `\u002f`), percent-encoded in either case, and as the
/// `Authorization` header it received, in a body without a `message` field — gets none of
/// them printed (issue 40, case 8). The server is a real HTTP server on loopback, the hostile
/// kind: it answers every request with HTTP 500 and that body, and stops after the test's
/// requests (bounded count and time).
#[test]
fn a_token_a_rest_server_echoes_in_any_spelling_is_never_printed() {
    const TOKEN: &str = "s3cr3t/t0ken+abc=xyz";
    let spellings = [
        TOKEN.to_string(),
        TOKEN.replace('/', "\\/"),
        TOKEN.replace('/', "\\u002f"),
        "s3cr3t%2Ft0ken%2Babc%3Dxyz".to_string(),
        "s3cr3t%2ft0ken%2babc%3dxyz".to_string(),
    ];
    for spelled in &spellings {
        let body = format!(
            "{{\"error\":\"bad credentials {spelled}\",\"echo\":\"Authorization: Bearer {}\"}}",
            TOKEN.replace('/', "\\/")
        );
        let server = EchoingServer::start(body);
        let dir = tempfile::tempdir().unwrap();
        let payload = payload_file(&dir);
        let uri = format!("uri=http://127.0.0.1:{}", server.port);
        let token = format!("token={TOKEN}");
        let args = [
            "validate",
            "--warehouse",
            "echo_warehouse",
            "--table",
            "db.t",
            "--option",
            "metastore=rest",
            "--option",
            &uri,
            "--option",
            "token.provider=bear",
            "--option",
            &token,
            "-vv",
            &payload,
        ];
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_paimon-wire"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{printed}");
        assert!(
            printed.contains("<redacted>"),
            "the echo is shown, redacted: {printed}"
        );
        for secret in spellings.iter().chain([&"t0ken+abc".to_string()]) {
            assert!(
                !printed.contains(secret.as_str()),
                "{secret:?} printed: {printed}"
            );
        }
        drop(server);
    }
}
