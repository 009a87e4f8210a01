//! A library that loads but exports no `grade_plugin_abi_version`.
#![expect(
    unsafe_code,
    reason = "a test library that exports a C symbol (`no_mangle`)"
)]

#[no_mangle]
pub extern "C" fn something_else() -> u32 {
    7
}
