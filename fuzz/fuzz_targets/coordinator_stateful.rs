//! The coordinator committing into one table across inputs: real payloads first, then fuzzed
//! and mutated ones, against the same table state (issue 14).
//!
//! Input: `[mode] [version selector] ++ bytes`. The low bit of `mode` picks the table (as in
//! the `coordinator` target). With bit 1 clear, `bytes` is a payload (the `coordinator` seeds
//! fit). With bit 1 set, the input re-sends the real payload the fixture already committed,
//! patched at the positions `bytes` gives (`[offset lo, offset hi, value]` triples) — so
//! already-committed files come back at other levels, lists, buckets and sizes.
//!
//! Every payload the coordinator accepts is committed under the next identifier. The
//! invariants, checked after every input (the oracle of `tests/stateful_model.rs`, issue 25):
//! when `deserialize`, `merge` or `commit` refuses, the table has the same snapshots as before
//! and reads back the same rows; when it accepts, the commit only added — the coordinator is
//! bound with the default binding (no compaction, no deletes), so no payload may erase, hide
//! or replace a row: on the append table every row read before is still read (as a multiset),
//! on the primary-key table every key read before is still read. (A commit the
//! coordinator accepts may name files that do not exist — the trust model takes file
//! existence on trust — so when a read fails after an accepted commit, the fixture starts
//! over with a fresh warehouse.)
#![no_main]

use std::sync::Mutex;

use futures::TryStreamExt;
use libfuzzer_sys::fuzz_target;
use paimon_wire::coordinator::{Binding, Coordinator};
use paimon_wire::paimon::table::Table;
use paimon_wire::SerializerVersion;
use paimon_wire_fuzz::{split_version, worker_payloads, FuzzTable, FuzzWarehouse, COMMIT_USER};

struct TableState {
    table: Table,
    coordinator: Coordinator,
    /// The real payload committed at start, at the newest version.
    committed: Vec<u8>,
    next_identifier: i64,
    /// Snapshot count and rows (as sorted debug strings) the last time they were checked.
    snapshots: usize,
    rows: Vec<String>,
}

struct State {
    runtime: tokio::runtime::Runtime,
    _warehouse: FuzzWarehouse,
    tables: Vec<TableState>,
}

async fn snapshot_count(table: &Table) -> usize {
    table
        .snapshot_manager()
        .list_all_ids()
        .await
        .expect("list snapshots")
        .len()
}

/// Every row of the latest snapshot, or the read error.
async fn read_rows(table: &Table) -> Result<Vec<String>, String> {
    let builder = table.new_read_builder();
    let plan = builder.new_scan().plan().await.map_err(|e| e.to_string())?;
    let batches: Vec<_> = builder
        .new_read()
        .map_err(|e| e.to_string())?
        .to_arrow(plan.splits())
        .map_err(|e| e.to_string())?
        .try_collect()
        .await
        .map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for batch in &batches {
        for i in 0..batch.num_rows() {
            let row: Vec<String> = batch
                .columns()
                .iter()
                .map(|c| format!("{:?}", c.slice(i, 1)))
                .collect();
            rows.push(row.join("|"));
        }
    }
    rows.sort();
    Ok(rows)
}

impl State {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let (warehouse, tables) = runtime.block_on(async {
            let warehouse = FuzzWarehouse::create().await;
            let mut tables = Vec::new();
            for which in FuzzTable::ALL {
                let table = warehouse.open(which).await;
                let coordinator = Coordinator::bind(table.clone(), Binding::append(COMMIT_USER))
                    .await
                    .expect("bind");
                let (version, committed) = worker_payloads(&table)
                    .await
                    .into_iter()
                    .max_by_key(|(v, _)| v.as_i32())
                    .expect("a payload");
                assert_eq!(version, SerializerVersion::CURRENT);
                let bound = coordinator
                    .deserialize(version, &committed)
                    .expect("a real payload is valid");
                coordinator.commit(bound, 1).await.expect("a real commit");
                let rows = read_rows(&table).await.expect("a real commit reads back");
                assert_eq!(rows.len(), 4);
                tables.push(TableState {
                    snapshots: snapshot_count(&table).await,
                    table,
                    coordinator,
                    committed,
                    next_identifier: 2,
                    rows,
                });
            }
            (warehouse, tables)
        });
        Self {
            runtime,
            _warehouse: warehouse,
            tables,
        }
    }
}

/// The oracle of an accepted commit under the default binding: it only added. `keyed`: the
/// primary-key table, whose rows render as `id|pt|v` and may change value per key.
fn assert_only_added(keyed: bool, before: &[String], after: &[String]) {
    let key = |row: &String| {
        if keyed {
            row.splitn(3, '|').take(2).collect::<Vec<_>>().join("|")
        } else {
            row.clone()
        }
    };
    let mut remaining: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    for row in after {
        *remaining.entry(key(row)).or_default() += 1;
    }
    for row in before {
        let k = key(row);
        match remaining.get_mut(&k) {
            // A key may be read again with another value; a row of the append table is
            // matched once.
            Some(n) if *n > 0 => {
                if !keyed {
                    *n -= 1;
                }
            }
            _ => panic!(
                "an accepted commit under the default binding removed {} {row:?}",
                if keyed { "the key of" } else { "row" }
            ),
        }
    }
}

fn state() -> &'static Mutex<State> {
    static STATE: std::sync::OnceLock<Mutex<State>> = std::sync::OnceLock::new();
    STATE.get_or_init(|| Mutex::new(State::new()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Some((version, bytes)) = split_version(rest) else {
        return;
    };
    let mut guard = state().lock().unwrap_or_else(|e| e.into_inner());
    let state = &mut *guard;
    let slot = usize::from(mode) % 2;
    let table_state = &mut state.tables[slot];
    let (version, payload) = if mode & 2 == 0 {
        (version, bytes.to_vec())
    } else {
        let mut patched = table_state.committed.clone();
        for patch in bytes.chunks_exact(3) {
            let offset = usize::from(u16::from_le_bytes([patch[0], patch[1]]));
            if let Some(byte) = patched.get_mut(offset) {
                *byte = patch[2];
            }
        }
        (SerializerVersion::CURRENT, patched)
    };
    let outcome = state.runtime.block_on(async {
        let bound = table_state.coordinator.deserialize(version, &payload)?;
        let merged = table_state.coordinator.merge([bound])?;
        table_state
            .coordinator
            .commit(merged, table_state.next_identifier)
            .await
    });
    let committed_now = match outcome {
        Ok(_) => true,
        Err(error) => {
            let _ = error.to_string();
            false
        }
    };
    let (snapshots, rows) = state.runtime.block_on(async {
        (
            snapshot_count(&table_state.table).await,
            read_rows(&table_state.table).await,
        )
    });
    if committed_now {
        table_state.next_identifier += 1;
        match rows {
            Ok(rows) => {
                assert_only_added(slot == 1, &table_state.rows, &rows);
                table_state.snapshots = snapshots;
                table_state.rows = rows;
            }
            // Accepted metadata naming files that are not there: outside what the coordinator
            // can check. Start over so later inputs run against a readable table.
            Err(_) => *state = State::new(),
        }
        return;
    }
    assert_eq!(
        snapshots, table_state.snapshots,
        "a refused commit changed the table's snapshots"
    );
    assert_eq!(
        rows.as_ref(),
        Ok(&table_state.rows),
        "a refused commit changed what the table reads back"
    );
});
