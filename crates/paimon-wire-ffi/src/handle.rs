//! One ownership idiom for every opaque pointer the C side holds.
//!
//! A handle is a `Box` whose first bytes are a [`HandleHeader`]: a magic number and the kind of
//! object behind it. C sees only an incomplete struct type (`paimon_wire_table *`, ...). Every
//! exported function turns its pointer arguments back into Rust references through
//! [`borrow`] / [`borrow_mut`] / [`take`], which refuse NULL and handles of another kind with an
//! error instead of reading a value of the wrong type.
//!
//! Each C-visible opaque type implements [`HandleDescriptor`], naming the Rust value it owns and
//! its [`HandleKind`]; nothing else is written per type.

use crate::error::{paimon_wire_error_code, FfiError, FfiResult};

/// "PAIMWIRE" in ASCII: the first word of every live handle.
const LIVE_MAGIC: u64 = 0x5041_494D_5749_5245;
/// Written over the magic when a handle is freed, so a stale pointer that still points at
/// unreused memory is refused rather than read.
const FREED_MAGIC: u64 = 0xDEAD_DEAD_DEAD_DEAD;

/// The kinds of object a handle can point to. The values are stable: they are stored in the
/// handle and printed in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum HandleKind {
    Table = 1,
    WriteBuilder = 2,
    TableWrite = 3,
    CommitMessages = 4,
    TableCommit = 5,
    TableOptions = 6,
}

impl HandleKind {
    /// The C type name of a handle of this kind.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            HandleKind::Table => "paimon_wire_table",
            HandleKind::WriteBuilder => "paimon_wire_write_builder",
            HandleKind::TableWrite => "paimon_wire_table_write",
            HandleKind::CommitMessages => "paimon_wire_commit_messages",
            HandleKind::TableCommit => "paimon_wire_table_commit",
            HandleKind::TableOptions => "paimon_wire_table_options",
        }
    }

    fn from_u32(value: u32) -> Option<Self> {
        [
            HandleKind::Table,
            HandleKind::WriteBuilder,
            HandleKind::TableWrite,
            HandleKind::CommitMessages,
            HandleKind::TableCommit,
            HandleKind::TableOptions,
        ]
        .into_iter()
        .find(|kind| *kind as u32 == value)
    }
}

/// Ties a C-visible opaque type to the Rust value its handles own.
pub(crate) trait HandleDescriptor {
    /// The value behind the handle.
    type Target: Send + 'static;
    /// The kind stored in (and checked on) every handle of this type.
    const KIND: HandleKind;
}

/// The first bytes of every handle allocation, whatever its kind.
#[repr(C)]
struct HandleHeader {
    magic: u64,
    kind: u32,
}

/// A handle allocation. `repr(C)` puts the header first, so a pointer to any handle can be
/// read as a pointer to a header before its kind is known.
#[repr(C)]
struct HandleBox<T> {
    header: HandleHeader,
    value: T,
}

/// Moves `value` to the heap and returns the pointer C will own.
pub(crate) fn into_raw<H: HandleDescriptor>(value: H::Target) -> *mut H {
    let boxed = Box::new(HandleBox {
        header: HandleHeader {
            magic: LIVE_MAGIC,
            kind: H::KIND as u32,
        },
        value,
    });
    Box::into_raw(boxed).cast::<H>()
}

/// Checks that `ptr` is a live handle of kind `H::KIND`, naming `arg` in the error.
///
/// # Safety
/// `ptr` must be NULL or point to readable memory at least as large as a [`HandleHeader`]; in
/// practice, a pointer this library returned (freed or not, of any kind).
unsafe fn check<H: HandleDescriptor>(
    ptr: *const H,
    arg: &str,
) -> FfiResult<*mut HandleBox<H::Target>> {
    if ptr.is_null() {
        return Err(FfiError::null(arg));
    }
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<HandleHeader>()) {
        return Err(not_a_handle::<H>(arg, "it is misaligned"));
    }
    // SAFETY: non-null and aligned; the caller promises it points to at least a header.
    let header = unsafe { &*ptr.cast::<HandleHeader>() };
    if header.magic == FREED_MAGIC {
        return Err(not_a_handle::<H>(arg, "it was already freed"));
    }
    if header.magic != LIVE_MAGIC {
        return Err(not_a_handle::<H>(
            arg,
            "it was not created by libpaimon_wire",
        ));
    }
    if header.kind != H::KIND as u32 {
        let found = HandleKind::from_u32(header.kind).map_or("an unknown handle", |k| k.c_name());
        return Err(FfiError::new(
            paimon_wire_error_code::WrongHandleKind,
            format!(
                "argument `{arg}` must be a {} handle, but a {found} was passed",
                H::KIND.c_name()
            ),
        ));
    }
    Ok(ptr as *mut HandleBox<H::Target>)
}

fn not_a_handle<H: HandleDescriptor>(arg: &str, why: &str) -> FfiError {
    FfiError::new(
        paimon_wire_error_code::WrongHandleKind,
        format!(
            "argument `{arg}` is not a {} handle: {why}",
            H::KIND.c_name()
        ),
    )
}

/// Borrows the value behind a handle for the duration of one call.
///
/// # Safety
/// `ptr` is NULL or was returned by this library; if it is a live handle of kind `H`, no other
/// thread mutates it during the borrow (the header documents which handles may be shared).
pub(crate) unsafe fn borrow<'a, H: HandleDescriptor>(
    ptr: *const H,
    arg: &str,
) -> FfiResult<&'a H::Target> {
    // SAFETY: forwarded from the caller.
    let boxed = unsafe { check(ptr, arg)? };
    // SAFETY: `check` proved this is a live `HandleBox<H::Target>`; shared use per the caller.
    Ok(unsafe { &(*boxed).value })
}

/// Borrows the value behind a handle mutably for the duration of one call.
///
/// # Safety
/// As [`borrow`], and no other reference to the handle's value exists during the call.
pub(crate) unsafe fn borrow_mut<'a, H: HandleDescriptor>(
    ptr: *mut H,
    arg: &str,
) -> FfiResult<&'a mut H::Target> {
    // SAFETY: forwarded from the caller.
    let boxed = unsafe { check(ptr, arg)? };
    // SAFETY: `check` proved this is a live `HandleBox<H::Target>`; exclusive per the caller.
    Ok(unsafe { &mut (*boxed).value })
}

/// Takes the value back from C, ending the handle's life.
///
/// # Safety
/// As [`borrow_mut`]; the caller must not use `ptr` afterwards.
pub(crate) unsafe fn take<H: HandleDescriptor>(ptr: *mut H, arg: &str) -> FfiResult<H::Target> {
    // SAFETY: forwarded from the caller.
    let boxed = unsafe { check(ptr, arg)? };
    // SAFETY: `check` proved this is a live handle, so it came from `Box::into_raw` in
    // `into_raw` with this exact type; we mark it freed before giving the memory back.
    let mut boxed = unsafe { Box::from_raw(boxed) };
    boxed.header.magic = FREED_MAGIC;
    let HandleBox { value, .. } = *boxed;
    Ok(value)
}

/// Frees a handle: NULL is a no-op, and a pointer that is not a live handle of kind `H` is left
/// alone (a free function has no way to report it, and freeing it would be worse).
///
/// # Safety
/// As [`take`].
pub(crate) unsafe fn free<H: HandleDescriptor>(ptr: *mut H) {
    // SAFETY: forwarded from the caller.
    drop(unsafe { take(ptr, "handle") });
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Alpha;
    impl HandleDescriptor for Alpha {
        type Target = String;
        const KIND: HandleKind = HandleKind::Table;
    }
    struct Beta;
    impl HandleDescriptor for Beta {
        type Target = Vec<u32>;
        const KIND: HandleKind = HandleKind::TableCommit;
    }

    #[test]
    fn a_handle_of_another_kind_is_refused_by_name() {
        let alpha = into_raw::<Alpha>("table".to_string());
        let err = unsafe { borrow::<Beta>(alpha.cast::<Beta>(), "commit") }.unwrap_err();
        assert_eq!(err.code, paimon_wire_error_code::WrongHandleKind);
        assert_eq!(
            err.message,
            "argument `commit` must be a paimon_wire_table_commit handle, but a paimon_wire_table was passed"
        );
        // The wrong-kind free leaves the handle intact; the right one frees it.
        unsafe { free::<Beta>(alpha.cast::<Beta>()) };
        assert_eq!(unsafe { borrow::<Alpha>(alpha, "table") }.unwrap(), "table");
        assert_eq!(unsafe { take::<Alpha>(alpha, "table") }.unwrap(), "table");
    }

    #[test]
    fn null_is_refused_and_names_the_argument() {
        let err = unsafe { borrow::<Alpha>(std::ptr::null(), "table") }.unwrap_err();
        assert_eq!(err.code, paimon_wire_error_code::NullPointer);
        assert_eq!(err.message, "argument `table` is NULL");
        unsafe { free::<Alpha>(std::ptr::null_mut()) };
    }

    #[test]
    fn memory_that_is_not_a_handle_is_refused() {
        let fake = [0u64; 4];
        let ptr = fake.as_ptr().cast::<Alpha>();
        let err = unsafe { borrow::<Alpha>(ptr, "table") }.unwrap_err();
        assert_eq!(err.code, paimon_wire_error_code::WrongHandleKind);
        assert!(
            err.message.contains("not created by libpaimon_wire"),
            "{}",
            err.message
        );
        let misaligned = unsafe { fake.as_ptr().cast::<u8>().add(1) }.cast::<Alpha>();
        let err = unsafe { borrow::<Alpha>(misaligned, "table") }.unwrap_err();
        assert!(err.message.contains("misaligned"), "{}", err.message);
    }
}
