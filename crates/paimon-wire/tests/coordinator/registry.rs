//! The rule catalogue (`paimon_wire::coordinator::REGISTRY`) against the sources it points
//! at: every test it names exists, every rule is in SECURITY.md, and the order is the one
//! the coordinator applies (decoding, then the table's state, then publication).

use paimon_wire::coordinator::{KeptOff, Reads, Rule, Stage, REGISTRY};

/// The workspace root.
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_test_the_catalogue_names_exists() {
    for entry in &REGISTRY {
        for test in entry.tests {
            let (file, function) = test
                .split_once("::")
                .unwrap_or_else(|| panic!("{}: {test} is not file::function", entry.name));
            let source = std::fs::read_to_string(root().join(file))
                .unwrap_or_else(|e| panic!("{}: {file}: {e}", entry.name));
            assert!(
                source.contains(&format!("fn {function}(")),
                "rule {}: no test {function} in {file}",
                entry.name
            );
        }
    }
}

const BEGIN: &str = "<!-- rule catalogue: written from paimon_wire::coordinator::REGISTRY by tests/coordinator/registry.rs; PAIMON_WIRE_WRITE_CATALOGUE=1 rewrites it -->";
const END: &str = "<!-- rule catalogue: end -->";

/// The catalogue as SECURITY.md shows it: one row a rule.
fn catalogue() -> String {
    let mut out = String::from(
        "| rule | checked | module | what it protects | lists it reads | form it reads (streamed commit) | tests |\n|---|---|---|---|---|---|---|\n",
    );
    for entry in &REGISTRY {
        let stage = match entry.stage {
            Stage::Message => "each message, at decoding",
            Stage::TableState => "against the table (validate and commit)",
            Stage::Publication => "the outcome of commit",
        };
        let reads = match entry.reads {
            Reads::OneMessage => "one message",
            Reads::NameKeys => "file-name keys",
            Reads::BucketState => "per-bucket state",
            Reads::AddedPaths => "added paths, per payload",
            Reads::DigestLeaves => "digest leaves",
            Reads::WholeEntries(KeptOff::ListsEmpty) => "whole entries (its lists are empty there)",
            Reads::WholeEntries(KeptOff::IndexListsEmpty) => {
                "whole entries (index lists are empty there)"
            }
            Reads::WholeEntries(KeptOff::DynamicBuckets) => {
                "whole entries (dynamic buckets are not admitted)"
            }
        };
        let tests: Vec<String> = entry
            .tests
            .iter()
            .map(|t| {
                let (file, function) = t.split_once("::").unwrap();
                let file = file.rsplit('/').next().unwrap();
                format!("`{file}` `{function}`")
            })
            .collect();
        out.push_str(&format!(
            "| `{}` | {stage} | `{}` | {} | {} | {reads} | {} |\n",
            entry.name,
            entry.module,
            entry.protects,
            entry.lists.join(", "),
            tests.join(", ")
        ));
    }
    out
}

#[test]
fn security_md_shows_the_catalogue_and_the_stages_come_in_order() {
    let path = root().join("SECURITY.md");
    let security = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = security
        .split_once(BEGIN)
        .expect("SECURITY.md has the rule catalogue's begin marker");
    let (shown, after) = rest
        .split_once(END)
        .expect("SECURITY.md has the rule catalogue's end marker");
    let expected = format!("\n{}", catalogue());
    if std::env::var("PAIMON_WIRE_WRITE_CATALOGUE").as_deref() == Ok("1") {
        std::fs::write(&path, format!("{before}{BEGIN}{expected}{END}{after}")).unwrap();
    } else {
        assert_eq!(
            shown, expected,
            "SECURITY.md's rule catalogue is not the registry's; rerun this test with \
             PAIMON_WIRE_WRITE_CATALOGUE=1"
        );
    }
    let rank = |stage: Stage| match stage {
        Stage::Message => 0,
        Stage::TableState => 1,
        Stage::Publication => 2,
    };
    for pair in Rule::ALL.windows(2) {
        assert!(
            rank(pair[0].stage()) <= rank(pair[1].stage()),
            "{} before {}",
            pair[0],
            pair[1]
        );
    }
    assert_eq!(Rule::ALL.len(), REGISTRY.len());
}

/// The directory of the rules (`paimon_wire::coordinator::rules`).
fn rules_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/coordinator/rules")
}

/// The module paths a source file imports from this crate: every `super::…` and
/// `crate::…` path in its code (comments left out), cut at the first `::{` or item.
fn crate_paths(source: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for start in ["super::", "crate::"] {
            let mut rest = code;
            while let Some(at) = rest.find(start) {
                let path: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                paths.push(path.trim_end_matches(':').to_string());
                rest = &rest[at + start.len()..];
            }
        }
    }
    paths
}

/// The layering of `coordinator::rules` (its module docs): a family imports only `shared`
/// and the leaf types (`coordinator::error`, `coordinator::binding`), never a sibling family
/// or anything above the rules; `shared` imports only itself and the leaf types. Unit tests
/// inside a file (`mod tests`, which `use super::*`) are left out.
#[test]
fn rule_families_import_only_what_lies_below_them() {
    let leaf = |path: &str| {
        path.starts_with("crate::coordinator::error")
            || path.starts_with("crate::coordinator::binding")
            || !path.starts_with("crate::coordinator")
    };
    let check = |file: &std::path::Path, allowed: &dyn Fn(&str) -> bool| {
        let source = std::fs::read_to_string(file).unwrap();
        let code = source.split("#[cfg(test)]").next().unwrap();
        for path in crate_paths(code) {
            assert!(
                allowed(&path),
                "{} imports {path}, which is not below it",
                file.display()
            );
        }
    };
    let mut families = 0;
    for entry in std::fs::read_dir(rules_dir()).unwrap() {
        let file = entry.unwrap().path();
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        if name == "mod.rs" || !name.ends_with(".rs") {
            continue;
        }
        families += 1;
        check(&file, &|path| {
            path.starts_with("super::shared") || (path.starts_with("crate::") && leaf(path))
        });
    }
    assert!(families >= 9, "{families} families found");
    // Shared modules import each other only downwards: their imports form no cycle.
    let mut imports: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for entry in std::fs::read_dir(rules_dir().join("shared")).unwrap() {
        let file = entry.unwrap().path();
        check(&file, &|path| {
            (path.starts_with("super::") && !path.starts_with("super::super"))
                || (path.starts_with("crate::") && leaf(path))
        });
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let source = std::fs::read_to_string(&file).unwrap();
        let code = source.split("#[cfg(test)]").next().unwrap().to_string();
        let siblings = crate_paths(&code)
            .into_iter()
            .filter_map(|path| {
                let module = path
                    .strip_prefix("super::")?
                    .split("::")
                    .next()?
                    .to_string();
                (module != name).then_some(module)
            })
            .collect();
        imports.insert(name, siblings);
    }
    fn reaches(
        imports: &std::collections::BTreeMap<String, Vec<String>>,
        from: &str,
        to: &str,
        seen: &mut std::collections::BTreeSet<String>,
    ) -> bool {
        imports.get(from).into_iter().flatten().any(|next| {
            next == to || (seen.insert(next.clone()) && reaches(imports, next, to, seen))
        })
    }
    for module in imports.keys() {
        assert!(
            !reaches(&imports, module, module, &mut Default::default()),
            "shared/{module}.rs imports, through its siblings, itself: a cycle"
        );
    }
}

/// Every module the catalogue names is a family of `coordinator::rules`, except the
/// publication stage's, which the publication itself judges (`coordinator/commit.rs`).
#[test]
fn every_module_the_catalogue_names_is_a_rule_family() {
    for entry in &REGISTRY {
        for module in entry.module.split(", ") {
            let file = if entry.stage == Stage::Publication {
                rules_dir().join(format!("../{module}.rs"))
            } else {
                rules_dir().join(format!("{module}.rs"))
            };
            assert!(
                file.is_file(),
                "rule {}: module {module} is not {}",
                entry.name,
                file.display()
            );
        }
    }
}
