//! A library that claims to be a plugin of ABI version 999. The host must refuse it after
//! reading the version and before touching any other symbol: it exports no description.
#![expect(
    unsafe_code,
    reason = "a test library that exports a C symbol (`no_mangle`)"
)]

#[no_mangle]
pub extern "C" fn grade_plugin_abi_version() -> u32 {
    999
}
