//! Shared by the C test suites: building the C programs against the header and the static
//! library, creating the test tables with the paimon crate, running the programs, and
//! reading the tables back with the paimon crate's read path.

#![allow(dead_code)]

pub mod error_lists;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use paimon_wire_core::paimon::catalog::{Catalog, Identifier};
use paimon_wire_core::paimon::spec::{BigIntType, DataType, IntType, Schema, VarCharType};
use paimon_wire_core::paimon::table::Table;
use paimon_wire_core::paimon::{CatalogOptions, FileSystemCatalog, Options};

/// The checked-in C header, `include/paimon_wire.h`.
pub fn header() -> String {
    std::fs::read_to_string(crate_dir().join("include/paimon_wire.h")).expect("header is readable")
}

/// The constants of `enum paimon_wire_error_code` in the header, as (name, value), in order:
/// `("PAIMON_WIRE_ERROR_CODE_ARROW", "10")`.
pub fn header_error_codes() -> Vec<(String, String)> {
    header()
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("PAIMON_WIRE_ERROR_CODE_"))
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| {
            (
                name.trim().to_string(),
                value.trim().trim_end_matches(',').to_string(),
            )
        })
        .collect()
}

/// The names of the functions the header declares: a line `<type> paimon_...(` that is not a
/// comment.
pub fn header_functions() -> std::collections::BTreeSet<String> {
    header()
        .lines()
        .filter_map(error_lists::declared_function)
        .map(str::to_string)
        .collect()
}

/// The crate directory.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>`, where cargo puts `libpaimon_wire.a`: the test binary runs from
/// `target/<profile>/deps`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps")
        .to_path_buf()
}

/// Builds `libpaimon_wire.a` once per test process. `cargo test` does not build a library
/// that has no Rust (`rlib`) crate type for integration tests, so the tests ask cargo for it
/// in the same profile; cargo has released its build lock while tests run.
fn static_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let profile = profile_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--lib", "-p", "paimon-wire-ffi"])
            .current_dir(crate_dir());
        if profile.file_name().is_some_and(|name| name == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "cargo build of libpaimon_wire failed");
        let library = profile.join("libpaimon_wire.a");
        assert!(library.exists(), "{} was not built", library.display());
        library
    })
}

/// `libpaimon_wire.so`, the shared library C programs load (built by the same `cargo build`
/// as [`static_library`]).
pub fn shared_library() -> PathBuf {
    let library = static_library().with_file_name("libpaimon_wire.so");
    assert!(library.exists(), "{} was not built", library.display());
    library
}

/// The system libraries the Rust standard library and the paimon crate's dependencies need
/// when `libpaimon_wire.a` is linked into a C program (`cargo rustc -p paimon-wire-ffi
/// --crate-type staticlib -- --print native-static-libs` lists them).
const NATIVE_STATIC_LIBS: &[&str] = &[
    "-ldl",
    "-lssl",
    "-lcrypto",
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-lc",
];

/// Compiles `tests/c/<name>.c` with the system C compiler against the checked-in header and
/// links it with the static library, so the program runs from anywhere. Built once per test
/// process.
pub fn c_program(name: &str) -> PathBuf {
    build_c_program(name, "", &[])
}

/// Compiles `tests/cpp/<name>.cpp` as C++17 (`CXX`, default `c++`, with `-Wall -Wextra
/// -Werror`) against the checked-in headers (`paimon_wire.hpp` over `paimon_wire.h`) and links
/// it with the static library. Built once per test process.
pub fn cpp_program(name: &str) -> PathBuf {
    build_program(Language::Cpp, Link::Static, name, "", &[])
}

/// [`c_program`] built with ThreadSanitizer (`-fsanitize=thread`) and linked to the shared
/// library (`libpaimon_wire.so`, found through an rpath), so that TSan can tell the library's
/// calls from the program's (`called_from_lib:` in `tests/tsan.supp`). The C side is
/// instrumented; the Rust library is not (stable Rust cannot build it with TSan).
pub fn c_program_tsan(name: &str) -> PathBuf {
    build_program(
        Language::C,
        Link::Shared,
        name,
        "-tsan",
        &["-fsanitize=thread", "-fno-omit-frame-pointer"],
    )
}

/// How a test program links libpaimon_wire.
#[derive(Clone, Copy, PartialEq)]
enum Link {
    /// `libpaimon_wire.a` and the system libraries it needs: the program runs from anywhere.
    Static,
    /// `libpaimon_wire.so`, loaded from a directory next to the program (see
    /// [`shared_library_dir`]).
    Shared,
}

/// A directory holding the shared library under its file name and under its SONAME (which
/// the dynamic loader looks for), for programs linked with [`Link::Shared`].
fn shared_library_dir(out_dir: &Path) -> PathBuf {
    let library = shared_library();
    let dir = out_dir.join("shared-lib");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&library, dir.join("libpaimon_wire.so"))
        .unwrap_or_else(|e| panic!("cannot copy {}: {e}", library.display()));
    let dynamic = Command::new("readelf")
        .arg("-d")
        .arg(&library)
        .output()
        .expect("readelf (binutils) runs");
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    if let Some(soname) = dynamic
        .lines()
        .find_map(|line| line.split("Library soname: [").nth(1))
        .and_then(|rest| rest.split(']').next())
    {
        if soname != "libpaimon_wire.so" {
            std::fs::copy(&library, dir.join(soname)).unwrap();
        }
    }
    dir
}

/// The language of a test program, and so its compiler, standard and source directory.
#[derive(Clone, Copy)]
enum Language {
    C,
    Cpp,
}

/// Compiler flags of the AddressSanitizer builds (gcc and clang both take them). LeakSanitizer
/// is part of AddressSanitizer on Linux.
const ASAN_FLAGS: &[&str] = &["-fsanitize=address", "-fno-omit-frame-pointer"];

/// [`c_program`] built with AddressSanitizer: the C side is instrumented, and ASan's allocator
/// replaces `malloc`/`free` for the whole process, the Rust library included (it allocates
/// through the system allocator), so LeakSanitizer sees every leak and ASan every double or
/// foreign free across the boundary.
pub fn c_program_asan(name: &str) -> PathBuf {
    build_c_program(name, "-asan", ASAN_FLAGS)
}

fn build_c_program(name: &str, suffix: &str, extra_flags: &[&str]) -> PathBuf {
    build_program(Language::C, Link::Static, name, suffix, extra_flags)
}

fn build_program(
    language: Language,
    link: Link,
    name: &str,
    suffix: &str,
    extra_flags: &[&str],
) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let key = match language {
        Language::C => format!("{name}{suffix}"),
        Language::Cpp => format!("cpp-{name}{suffix}"),
    };
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(n, _)| *n == key) {
        return path.clone();
    }
    let library = static_library();
    let out_dir = profile_dir().join("paimon-wire-c-tests");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join(&key);
    let (directory, extension, compiler_variable, default_compiler, standard) = match language {
        Language::C => ("tests/c", "c", "CC", "cc", "-std=c11"),
        Language::Cpp => ("tests/cpp", "cpp", "CXX", "c++", "-std=c++17"),
    };
    let source = crate_dir()
        .join(directory)
        .join(format!("{name}.{extension}"));
    let compiler =
        std::env::var(compiler_variable).unwrap_or_else(|_| default_compiler.to_string());
    let mut command = Command::new(&compiler);
    command
        .args([
            standard,
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .args(["-Wno-unused-function", "-g", "-O1"])
        .args(extra_flags)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg("-I")
        .arg(crate_dir().join("tests/c"))
        .arg(&source);
    match link {
        Link::Static => command.arg(library).args(NATIVE_STATIC_LIBS),
        Link::Shared => {
            let dir = shared_library_dir(&out_dir);
            command
                .arg("-L")
                .arg(&dir)
                .arg("-lpaimon_wire")
                .arg(format!("-Wl,-rpath,{}", dir.display()))
        }
    };
    let output = command
        .arg("-Wl,--gc-sections")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {compiler:?}: {e}"));
    assert!(
        output.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    built.push((key, out.clone()));
    out
}

/// Runs a program and returns its output, whatever its exit status.
pub fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// Runs a program that must succeed; returns its stdout.
pub fn run_ok(program: &Path, args: &[&str]) -> String {
    run_ok_with_env(program, args, &[])
}

/// [`run_ok`] with environment variables `env` set for the program.
/// Errors the program returns are checked against the header's lists
/// ([`error_lists::check_recorded_errors`]).
pub fn run_ok_with_env(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> String {
    let recording = tempfile::tempdir().unwrap();
    let log = recording.path().join("errors.log");
    let output = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .env(error_lists::ERROR_LOG_VARIABLE, &log)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(
        output.status.success(),
        "{} {:?} failed with {}:\nstdout:\n{}\nstderr:\n{}",
        program.display(),
        args,
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    error_lists::check_recorded_errors(program, &log);
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `program` under `valgrind --leak-check=full --error-exitcode=99` and returns its
/// stdout after checking valgrind found no error and no lost block, and that every error it
/// returned is in its function's documented list ("still reachable" memory
/// is allowed: valgrind does not count it as an error). `tests/valgrind.supp` suppresses one
/// block: Rust's standard library's handle of the calling thread (see the file).
///
/// Without valgrind on the machine the program runs without memcheck (`run_ok`, so its
/// output is still checked) after a note on stderr; under CI (`CI` set) a missing valgrind
/// fails the test instead, so CI never loses the memory check.
pub fn memcheck(program: &Path, args: &[&str]) -> String {
    if !valgrind_installed() {
        assert!(
            std::env::var_os("CI").is_none(),
            "valgrind is not installed (apt-get install valgrind); CI runs every C program under it"
        );
        eprintln!(
            "note: valgrind is not installed: {} runs without memcheck (apt-get install valgrind)",
            program.display()
        );
        return run_ok(program, args);
    }
    let suppressions = crate_dir().join("tests/valgrind.supp");
    let recording = tempfile::tempdir().unwrap();
    let log = recording.path().join("errors.log");
    let output = Command::new("valgrind")
        .env(error_lists::ERROR_LOG_VARIABLE, &log)
        .args([
            "--leak-check=full",
            "--error-exitcode=99",
            "--num-callers=50",
        ])
        .arg(format!("--suppressions={}", suppressions.display()))
        .arg(program)
        .args(args)
        .output()
        .expect("valgrind runs");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let report = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{} under valgrind failed with {}:\nstdout:\n{stdout}\nvalgrind:\n{report}",
        program.display(),
        output.status
    );
    assert!(report.contains("ERROR SUMMARY: 0 errors"), "{report}");
    for lost in ["definitely lost", "indirectly lost", "possibly lost"] {
        if let Some(line) = report.lines().find(|line| line.contains(lost)) {
            assert!(
                line.contains(&format!("{lost}: 0 bytes")),
                "{line}\n{report}"
            );
        }
    }
    error_lists::check_recorded_errors(program, &log);
    stdout
}

/// Runs a [`c_program_asan`] program, which must succeed, with AddressSanitizer and
/// LeakSanitizer stopping it (exit code 98) at the first report; returns its stdout after
/// checking there was no report.
pub fn asan_run(program: &Path, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:halt_on_error=1:exitcode=98:detect_stack_use_after_return=1",
        )
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{} under AddressSanitizer failed with {}:\nstdout:\n{stdout}\nstderr:\n{stderr}",
        program.display(),
        output.status
    );
    for report in ["ERROR: AddressSanitizer", "ERROR: LeakSanitizer"] {
        assert!(!stderr.contains(report), "{stderr}");
    }
    stdout
}

pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The layouts of the test table `orders (id INT, name STRING, amount BIGINT, dt STRING)`.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Append-only, partitioned by `dt`, bucket-unaware.
    AppendPartitioned,
    /// Primary key `(dt, id)`, partitioned by `dt`, 2 fixed buckets.
    PrimaryKeyFixedBuckets,
    /// Append-only, unpartitioned, 4 fixed buckets (bucket key `id`).
    AppendUnpartitionedBuckets,
    /// Primary key `(dt, id)`, partitioned by `dt`, postpone bucket (`bucket = -2`) with
    /// `postpone.default-bucket-num = 2` so fixed-bucket writes work.
    PostponePrimaryKey,
    /// Primary key `(dt, id)`, partitioned by `dt`, dynamic buckets (`bucket = -1`) of 20 keys.
    PrimaryKeyDynamicBuckets,
}

/// A temporary filesystem warehouse with database `db`.
pub struct Warehouse {
    dir: tempfile::TempDir,
    catalog: FileSystemCatalog,
}

impl Warehouse {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, dir.path().to_str().unwrap());
        let catalog = FileSystemCatalog::new(options).unwrap();
        block_on(catalog.create_database("db", false, HashMap::new())).unwrap();
        Self { dir, catalog }
    }

    pub fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }

    /// Scratch directory for payload files, outside the warehouse.
    pub fn scratch(&self, name: &str) -> String {
        let dir = self.dir.path().join("_scratch");
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name).to_str().unwrap().to_string()
    }

    /// Creates `db.<name>` with `layout`.
    pub fn create_orders(&self, name: &str, layout: Layout) {
        let string = || DataType::VarChar(VarCharType::string_type());
        let builder = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("name", string())
            .column("amount", DataType::BigInt(BigIntType::new()))
            .column("dt", string());
        let builder = match layout {
            Layout::AppendPartitioned => builder.partition_keys(["dt"]),
            Layout::PrimaryKeyFixedBuckets => builder
                .partition_keys(["dt"])
                .primary_key(["dt", "id"])
                .option("bucket", "2"),
            Layout::AppendUnpartitionedBuckets => {
                builder.option("bucket", "4").option("bucket-key", "id")
            }
            Layout::PostponePrimaryKey => builder
                .partition_keys(["dt"])
                .primary_key(["dt", "id"])
                .option("bucket", "-2")
                .option("postpone.default-bucket-num", "2"),
            Layout::PrimaryKeyDynamicBuckets => builder
                .partition_keys(["dt"])
                .primary_key(["dt", "id"])
                .option("bucket", "-1")
                .option("dynamic-bucket.target-row-num", "20"),
        };
        let identifier = Identifier::new("db", name);
        block_on(
            self.catalog
                .create_table(&identifier, builder.build().unwrap(), false),
        )
        .unwrap();
    }

    pub fn table(&self, name: &str) -> Table {
        block_on(self.catalog.get_table(&Identifier::new("db", name))).unwrap()
    }

    /// Every row of `db.<name>` as `(id, name, amount, dt)`, sorted.
    pub fn rows(&self, name: &str) -> Vec<(i32, String, i64, String)> {
        let table = self.table(name);
        let batches: Vec<RecordBatch> = block_on(async {
            let read = table.new_read_builder();
            let plan = read.new_scan().plan().await.unwrap();
            read.new_read()
                .unwrap()
                .to_arrow(plan.splits())
                .unwrap()
                .try_collect()
                .await
                .unwrap()
        });
        let mut rows = Vec::new();
        for batch in batches {
            let column = |name: &str| batch.column_by_name(name).unwrap().clone();
            let (ids, names, amounts, dts) =
                (column("id"), column("name"), column("amount"), column("dt"));
            let ids = ids.as_any().downcast_ref::<Int32Array>().unwrap();
            let names = names.as_any().downcast_ref::<StringArray>().unwrap();
            let amounts = amounts.as_any().downcast_ref::<Int64Array>().unwrap();
            let dts = dts.as_any().downcast_ref::<StringArray>().unwrap();
            for i in 0..batch.num_rows() {
                assert!(!ids.is_null(i));
                rows.push((
                    ids.value(i),
                    names.value(i).to_string(),
                    amounts.value(i),
                    dts.value(i).to_string(),
                ));
            }
        }
        rows.sort();
        rows
    }

    /// `(id, commit user, commit identifier)` of every snapshot of `db.<name>`, oldest first.
    pub fn snapshots(&self, name: &str) -> Vec<(i64, String, i64)> {
        let table = self.table(name);
        block_on(async {
            let manager = table.snapshot_manager();
            let Some(latest) = manager.get_latest_snapshot_id().await.unwrap() else {
                return Vec::new();
            };
            let earliest = manager.earliest_snapshot_id().await.unwrap().unwrap();
            let mut out = Vec::new();
            for id in earliest..=latest {
                let snapshot = manager.get_snapshot(id).await.unwrap();
                out.push((
                    id,
                    snapshot.commit_user().to_string(),
                    snapshot.commit_identifier(),
                ));
            }
            out
        })
    }

    /// Every data file (`*.parquet`, `*.orc`, `*.avro`) under the table directory.
    pub fn data_files(&self, name: &str) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let file_name = path.file_name().unwrap().to_string_lossy().to_string();
                if path.is_dir() {
                    if !matches!(
                        file_name.as_str(),
                        "manifest" | "snapshot" | "schema" | "index"
                    ) {
                        walk(&path, out);
                    }
                } else if file_name.starts_with("data-") {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.dir.path().join("db.db").join(name), &mut out);
        out.sort();
        out
    }
}

/// The rows the worker program writes for ids `first..first+count` over `partitions`
/// (round-robin by id), as `rows` returns them.
pub fn expected_rows(
    first: i64,
    count: i64,
    partitions: &[&str],
) -> Vec<(i32, String, i64, String)> {
    (first..first + count)
        .map(|id| {
            (
                id as i32,
                format!("name-{id}"),
                id * 10,
                partitions[(id % partitions.len() as i64) as usize].to_string(),
            )
        })
        .collect()
}

/// Whether `valgrind --version` runs.
fn valgrind_installed() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}
