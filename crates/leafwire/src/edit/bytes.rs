//! The editor's bytes: an owned vector, or (on Unix) a private copy-on-write mapping of
//! the file being edited, so that opening a file for editing costs O(1) whatever its size
//! and memory holds only the pages an edit changes.
//!
//! The mapping sits at the start of an address-space reservation: appended blocks land in
//! the anonymous pages after the file, so the document stays one contiguous slice that the
//! lazy reader and the format's writers use as they would a `Vec`. A reservation costs no
//! memory until written. An edit that outgrows it copies the bytes into a vector once.

use std::ops::{Deref, DerefMut};

use crate::format::sink::ByteSink;

pub(super) enum EditBytes {
    Owned(Vec<u8>),
    #[cfg(unix)]
    Mapped(mapped::MappedBuf),
}

impl EditBytes {
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            EditBytes::Owned(v) => v,
            #[cfg(unix)]
            EditBytes::Mapped(m) => m.to_vec(),
        }
    }

    /// Whether the bytes are a mapping of the file (for tests and `Editor::is_mapped`).
    pub fn is_mapped(&self) -> bool {
        !matches!(self, EditBytes::Owned(_))
    }

    /// Makes room for `len` bytes: a mapping that cannot hold them becomes a vector.
    fn make_room(&mut self, len: usize) {
        #[cfg(unix)]
        if let EditBytes::Mapped(m) = self {
            if len > m.reserved() {
                let mut v = Vec::with_capacity(len);
                v.extend_from_slice(m);
                *self = EditBytes::Owned(v);
            }
        }
        let _ = len;
    }
}

impl Deref for EditBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            EditBytes::Owned(v) => v,
            #[cfg(unix)]
            EditBytes::Mapped(m) => m,
        }
    }
}

impl DerefMut for EditBytes {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            EditBytes::Owned(v) => v,
            #[cfg(unix)]
            EditBytes::Mapped(m) => m,
        }
    }
}

impl ByteSink for EditBytes {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.make_room(self.len() + bytes.len());
        match self {
            EditBytes::Owned(v) => v.extend_from_slice(bytes),
            #[cfg(unix)]
            EditBytes::Mapped(m) => m.extend_from_slice(bytes),
        }
    }

    fn resize(&mut self, len: usize, value: u8) {
        self.make_room(len);
        match self {
            EditBytes::Owned(v) => v.resize(len, value),
            #[cfg(unix)]
            EditBytes::Mapped(m) => m.resize(len, value),
        }
    }
}

#[cfg(unix)]
pub(super) mod mapped {
    use std::fs::File;
    use std::io;
    use std::ops::{Deref, DerefMut};
    use std::os::unix::io::AsRawFd;
    use std::ptr::NonNull;

    /// A private mapping of a file's first `len` bytes at the start of a larger
    /// reservation of anonymous pages.
    pub struct MappedBuf {
        base: NonNull<u8>,
        len: usize,
        reserved: usize,
    }

    // SAFETY: the region is owned by this value alone (like a Vec's allocation); the
    // mapping is private, so no other process's writes reach it except through pages of
    // the file not yet copied, which the caller of `map` promised no one changes.
    unsafe impl Send for MappedBuf {}
    unsafe impl Sync for MappedBuf {}

    fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 { page as usize } else { 4096 }
    }

    #[cfg(target_os = "linux")]
    const NORESERVE: libc::c_int = libc::MAP_NORESERVE;
    #[cfg(not(target_os = "linux"))]
    const NORESERVE: libc::c_int = 0;

    impl MappedBuf {
        /// Maps the first `len` bytes of `file` (its length) privately, with room after it
        /// for at least as much again (1 GiB at least).
        ///
        /// # Safety
        ///
        /// No process may modify or truncate the file while the result lives, as for
        /// [`crate::MappedFile::open`].
        pub unsafe fn map(file: &File, len: usize) -> io::Result<MappedBuf> {
            let page = page_size();
            let round = |n: usize| n.checked_add(page - 1).map(|n| n / page * page);
            let file_pages = round(len.max(1)).ok_or_else(too_big)?;
            let mut last_error = None;
            for room in [len.max(1 << 30), 64 << 20] {
                let Some(reserved) = file_pages.checked_add(room).and_then(round) else { continue };
                // SAFETY: a fresh anonymous mapping at an address the kernel picks.
                let base = unsafe {
                    libc::mmap(std::ptr::null_mut(), reserved, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | NORESERVE, -1, 0)
                };
                if base == libc::MAP_FAILED {
                    last_error = Some(io::Error::last_os_error());
                    continue;
                }
                if len > 0 {
                    // SAFETY: replaces the start of the reservation just made, which this
                    // function owns; the file's contract is the caller's.
                    let at = unsafe {
                        libc::mmap(base, len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_FIXED, file.as_raw_fd(), 0)
                    };
                    if at == libc::MAP_FAILED {
                        let err = io::Error::last_os_error();
                        // SAFETY: unmaps the reservation made above.
                        unsafe { libc::munmap(base, reserved) };
                        return Err(err);
                    }
                }
                let base = NonNull::new(base.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
                return Ok(MappedBuf { base, len, reserved });
            }
            Err(last_error.unwrap_or_else(too_big))
        }

        pub fn reserved(&self) -> usize {
            self.reserved
        }

        /// Grows (the new bytes set to `value`) or shrinks, within the reservation.
        pub fn resize(&mut self, len: usize, value: u8) {
            assert!(len <= self.reserved, "resize past the reservation (EditBytes makes room first)");
            let old = self.len;
            self.len = len;
            if len > old {
                // Bytes past the length may hold what a truncation left: set them.
                self[old..len].fill(value);
            }
        }

        pub fn extend_from_slice(&mut self, bytes: &[u8]) {
            let at = self.len;
            self.resize(at + bytes.len(), 0);
            self[at..].copy_from_slice(bytes);
        }
    }

    fn too_big() -> io::Error {
        io::Error::other("file too large to map for editing")
    }

    impl Deref for MappedBuf {
        type Target = [u8];
        #[inline]
        fn deref(&self) -> &[u8] {
            // SAFETY: `len` ≤ `reserved` bytes from `base` are mapped readable for the life
            // of `self`.
            unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
        }
    }

    impl DerefMut for MappedBuf {
        #[inline]
        fn deref_mut(&mut self) -> &mut [u8] {
            // SAFETY: as above, and writable (a private mapping: writes stay in memory).
            unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), self.len) }
        }
    }

    impl Drop for MappedBuf {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly the reservation `map` made (file part included).
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.reserved) };
        }
    }
}
