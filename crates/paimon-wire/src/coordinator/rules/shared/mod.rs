//! What the rule families share, below all of them: message fields, keys, limits, paths, the
//! table's rules, the per-message check context and the table state. Nothing here imports a
//! family or anything above the rules.

pub(crate) mod buckets;
pub(crate) mod check;
pub(crate) mod fields;
pub(crate) mod history;
pub(crate) mod keys;
pub mod limits;
pub(crate) mod paths;
pub(crate) mod state;
pub(crate) mod streamed;
pub(crate) mod table_rules;
pub(crate) mod vectors;
