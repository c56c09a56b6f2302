//! Decoding many payloads at once ([`Coordinator::deserialize_all`]), in two stages on two
//! threads.
//!
//! A helper thread takes the payloads from the caller's iterator one at a time, in order,
//! reads each in place and runs everything that can refuse it (structure, decode limits,
//! the rules of the bound table, identical duplicates). The calling thread builds the owned
//! messages of each accepted payload, in order. The stages overlap, and every long-lived
//! value is allocated by the calling thread, as [`Coordinator::deserialize`] would allocate
//! it: the allocator keeps no second heap of decoded messages (with glibc's per-thread arenas,
//! decoding whole payloads on two threads raised the peak RSS of 10^5 files by 16 %).
//!
//! At most [`IN_FLIGHT`] checked payloads wait for the calling thread, so a caller whose
//! iterator reads each payload when it is taken (a file, a socket) holds a few, not all.
//!
//! The answer is the one [`Coordinator::deserialize`] called on each payload in order gives:
//! the bound payloads in the order given, or the first payload refused. The helper stops
//! taking payloads at the first refusal.

use std::collections::HashSet;
use std::fmt;

use super::rules::merge::FileAt;
use super::{BoundMessages, Coordinator, CoordinatorError};
use crate::SerializerVersion;

/// A payload that [`Coordinator::deserialize_all`] refused: its position among the payloads
/// given (counting from 0) and why. Nothing was bound.
#[derive(Debug)]
pub struct PayloadRefused {
    /// Position of the refused payload in the order given, counting from 0.
    pub index: usize,
    /// Why it was refused: what [`Coordinator::deserialize`] answers for it.
    pub error: CoordinatorError,
}

impl fmt::Display for PayloadRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "payload {} (counting from 0 in the order given): {}",
            self.index, self.error
        )
    }
}

impl std::error::Error for PayloadRefused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Checked payloads that may wait for the calling thread: enough to keep it busy while the
/// helper checks the next one.
pub(crate) const IN_FLIGHT: usize = 4;

/// Whether [`Coordinator::deserialize_all`] may run its helper thread: the process may run
/// on more than one core.
pub(crate) fn may_overlap() -> bool {
    std::thread::available_parallelism().is_ok_and(|cores| cores.get() > 1)
}

/// [`Coordinator::deserialize_all_versioned`]: with a helper thread when `overlap`, else one
/// payload after the other on the calling thread.
pub(crate) fn deserialize_all<I, P>(
    coordinator: &Coordinator,
    payloads: I,
    overlap: bool,
) -> Result<Vec<BoundMessages>, PayloadRefused>
where
    I: IntoIterator<Item = (SerializerVersion, P)>,
    I::IntoIter: Send,
    P: AsRef<[u8]> + Send,
{
    if !overlap {
        return payloads
            .into_iter()
            .enumerate()
            .map(|(index, (version, payload))| {
                coordinator
                    .deserialize(version, payload.as_ref())
                    .map_err(|error| PayloadRefused { index, error })
            })
            .collect();
    }
    let payloads = payloads.into_iter();
    std::thread::scope(|scope| {
        let (checked_sender, checked) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let helper = scope.spawn(move || {
            for (index, (version, payload)) in payloads.enumerate() {
                let verdict = coordinator
                    .parse_payload(version, payload.as_ref())
                    .and_then(|view| coordinator.check_payload(&view));
                let refused = verdict.is_err();
                // The calling thread gone (it met a refusal) or this payload refused: no
                // payload after it is taken.
                let checked = CheckedPayload {
                    index,
                    version,
                    payload,
                    verdict,
                };
                if checked_sender.send(checked).is_err() || refused {
                    break;
                }
            }
        });
        // Consumes the receiver: once this returns, a helper blocked on a full channel is
        // told no one listens, and ends.
        let answer = bind_in_order(coordinator, checked);
        match helper.join() {
            Ok(()) => answer,
            // Checking does not panic on any input; a panic here is the caller's iterator's,
            // and goes back to the caller as it would without the helper.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The calling thread's stage: builds the owned messages of each checked payload, in the
/// order the helper took them, and stops at the first refusal.
fn bind_in_order<P: AsRef<[u8]>>(
    coordinator: &Coordinator,
    checked: std::sync::mpsc::Receiver<CheckedPayload<P>>,
) -> Result<Vec<BoundMessages>, PayloadRefused> {
    let mut bound = Vec::new();
    for CheckedPayload {
        index,
        version,
        payload,
        verdict,
    } in checked
    {
        let refused = |error| PayloadRefused { index, error };
        let duplicates = verdict.map_err(refused)?;
        // Read in place again (the helper's view borrowed the payload it handed over); the
        // same bytes read the same way, so this cannot refuse what the helper accepted.
        let view = coordinator
            .parse_payload(version, payload.as_ref())
            .map_err(refused)?;
        bound.push(coordinator.bind_checked(&view, &duplicates).0);
    }
    Ok(bound)
}

/// What the helper found for one payload: its identical duplicate files, or why it is
/// refused.
type CheckVerdict = Result<HashSet<FileAt>, CoordinatorError>;

/// A payload the helper has checked, on its way to the calling thread.
struct CheckedPayload<P> {
    /// Its position in the order given.
    index: usize,
    /// The serializer version it was written at.
    version: SerializerVersion,
    /// Its bytes.
    payload: P,
    /// What the helper found.
    verdict: CheckVerdict,
}
