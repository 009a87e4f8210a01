//! Signals that end a process (Ctrl-C, `kill`) held back while a grades file is appended
//! to, so that a run's lines land whole or not at all: a SIGINT between two writes of an
//! append left thousands of lines of a failed run and a torn tail. The signal is noted and
//! raised again, with the handler that was in place before, once the append has ended.
//! Only SIGKILL (which nothing can hold back) can still cut an append short; the next
//! append mends what it leaves.

#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "installing, restoring and raising signals is libc FFI; each block has its SAFETY note"
)]
mod imp {
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Mutex;

    /// The signals held back: those a user or a supervisor sends to stop a run.
    const HELD: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

    /// The signal that came while held back, or 0.
    static CAUGHT: AtomicI32 = AtomicI32::new(0);

    /// How many appends hold signals back now (threads of one process may append to two
    /// grades files), and the handlers that were in place before the first of them.
    static HOLDERS: Mutex<(usize, Vec<libc::sigaction>)> = Mutex::new((0, Vec::new()));

    extern "C" fn note(signal: libc::c_int) {
        // Only an atomic store: nothing else is safe in a signal handler.
        CAUGHT.store(signal, Ordering::SeqCst);
    }

    /// Holds the signals back until dropped.
    pub(crate) struct Held(());

    pub(crate) fn hold() -> Held {
        let Ok(mut holders) = HOLDERS.lock() else {
            return Held(());
        };
        if holders.0 == 0 {
            let mut saved = Vec::with_capacity(HELD.len());
            for signal in HELD {
                // SAFETY: `sigaction` structs are plain data, valid when zeroed; `note` only
                // stores to an atomic, which is async-signal-safe; the previous action is
                // written into `old`, which lives across the call.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = note as extern "C" fn(libc::c_int) as usize;
                    action.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut action.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(signal, &action, &mut old);
                    saved.push(old);
                }
            }
            holders.1 = saved;
        }
        holders.0 += 1;
        Held(())
    }

    impl Drop for Held {
        fn drop(&mut self) {
            let Ok(mut holders) = HOLDERS.lock() else {
                return;
            };
            holders.0 = holders.0.saturating_sub(1);
            if holders.0 > 0 {
                return;
            }
            for (signal, old) in HELD.iter().zip(&holders.1) {
                // SAFETY: `old` is the action `sigaction` returned for this signal in `hold`.
                unsafe {
                    libc::sigaction(*signal, old, std::ptr::null_mut());
                }
            }
            holders.1.clear();
            let caught = CAUGHT.swap(0, Ordering::SeqCst);
            if caught != 0 {
                // SAFETY: raising a signal has no memory effects; its handler (the one in
                // place before the append, by default the end of the process) runs now.
                unsafe {
                    libc::raise(caught);
                }
            }
        }
    }
}

#[cfg(not(unix))]
mod imp {
    pub(crate) struct Held(());

    pub(crate) fn hold() -> Held {
        Held(())
    }
}

pub(crate) use imp::hold;
