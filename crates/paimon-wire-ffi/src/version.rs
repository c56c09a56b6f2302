//! Versions of the library and of its ABI, for a host to compare the header it was compiled
//! with against the library it loaded.

use std::ffi::c_char;

/// Major version of this library (the crate's version, `MAJOR.MINOR.PATCH`).
pub const PAIMON_WIRE_VERSION_MAJOR: u32 = 0;
/// Minor version of this library.
pub const PAIMON_WIRE_VERSION_MINOR: u32 = 1;
/// Patch version of this library.
pub const PAIMON_WIRE_VERSION_PATCH: u32 = 0;

/// The ABI version of this header: it changes when a change breaks programs built against an
/// earlier header (a function removed or changed, a struct's layout changed, an enum value's
/// meaning changed). The shared library's SONAME is `libpaimon_wire.so.<ABI version>`
/// (build.rs reads this line). Adding functions, enum values or error codes keeps it.
pub const PAIMON_WIRE_ABI_VERSION: u32 = 1;

// The version macros are literals (cbindgen copies them into the header); tests/version.rs
// checks they agree with the crate's version in Cargo.toml. (No compile-time check: the fuzz
// workspace compiles these sources as a crate of another version.)

/// The library's version, `"MAJOR.MINOR.PATCH"` (possibly with a `-pre` suffix): a static
/// NUL-terminated string, never freed.
#[no_mangle]
pub extern "C" fn paimon_wire_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The ABI version the library was built with. A host compares it with the header's
/// `PAIMON_WIRE_ABI_VERSION` at startup and refuses to run on a mismatch (the dynamic loader
/// already refuses a library whose SONAME differs).
#[no_mangle]
pub extern "C" fn paimon_wire_abi_version() -> u32 {
    PAIMON_WIRE_ABI_VERSION
}
