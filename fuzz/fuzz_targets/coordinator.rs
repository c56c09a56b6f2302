//! The coordinator's whole decode → validate → bind → merge path against real local tables:
//! `[table selector] [version selector] ++ payload` (see `split_coordinator_input`).
//!
//! Checks, beyond "no panic, no sanitizer report": whatever the coordinator accepts passes
//! its own invariants (no file twice), and merging a payload with a retry of itself keeps
//! exactly the files of the payload.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use paimon_wire::coordinator::{Binding, Coordinator};
use paimon_wire::BoundMessages;
use paimon_wire_fuzz::{
    split_coordinator_input, write_coordinator_seeds_if_asked, FuzzTable, FuzzWarehouse,
    COMMIT_USER,
};

struct Fixture {
    _warehouse: FuzzWarehouse,
    coordinators: Vec<(FuzzTable, Coordinator)>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let warehouse = FuzzWarehouse::create().await;
            write_coordinator_seeds_if_asked(&warehouse, false).await;
            let mut coordinators = Vec::new();
            for table in FuzzTable::ALL {
                let opened = warehouse.open(table).await;
                let coordinator = Coordinator::bind(opened, Binding::append(COMMIT_USER))
                    .await
                    .expect("bind");
                coordinators.push((table, coordinator));
            }
            Fixture {
                _warehouse: warehouse,
                coordinators,
            }
        })
    })
}

/// Every file of `bound` as (list, name): the identity the merge uses.
fn file_names(bound: &BoundMessages) -> Vec<(&'static str, String)> {
    let mut names = Vec::new();
    for m in bound.messages() {
        for (list, files) in [
            ("new_files", &m.new_files),
            ("deleted_files", &m.deleted_files),
            ("new_changelog_files", &m.new_changelog_files),
        ] {
            names.extend(files.iter().map(|f| (list, f.file_name.clone())));
        }
        for (list, files) in [
            ("new_index_files", &m.new_index_files),
            ("deleted_index_files", &m.deleted_index_files),
        ] {
            names.extend(files.iter().map(|f| (list, f.file_name.clone())));
        }
    }
    names.sort();
    names
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let Some((table, version, payload)) = split_coordinator_input(data) else {
        return;
    };
    let coordinator = &fixture
        .coordinators
        .iter()
        .find(|(t, _)| *t == table)
        .expect("every table has a coordinator")
        .1;
    let bound = match coordinator.deserialize(version, payload) {
        Ok(bound) => bound,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let names = file_names(&bound);
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(names, unique, "a bound payload names a file twice");
    assert!(bound.reported_row_count() >= 0);

    // A retry of the same payload merges away; merging alone only drops file-less messages.
    let once = coordinator
        .merge([bound.clone()])
        .expect("a bound payload merges on its own");
    let twice = coordinator
        .merge([bound.clone(), bound])
        .expect("a payload merges with a retry of itself");
    assert_eq!(file_names(&once), names);
    assert_eq!(file_names(&twice), names);
});
