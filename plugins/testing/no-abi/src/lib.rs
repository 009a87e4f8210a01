//! A library that loads but exports no `grade_plugin_abi_version`.
#![allow(unsafe_code)]

#[no_mangle]
pub extern "C" fn something_else() -> u32 {
    7
}
