//! The system's user database (`getpwuid_r`): a user's name and home folder, for the paths and the
//! messages that name whose a folder is.

use std::ffi::CStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The name and home folder the user database gives `uid`, when it has an entry for it.
struct Entry {
    name: Vec<u8>,
    home: Vec<u8>,
}

fn entry(uid: u32) -> Option<Entry> {
    let mut buffer = vec![0u8; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to fill in.
    let mut found_entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes the entry into `found_entry` and its strings into `buffer`, both
    // alive for the call and as long as they are read below; `found` points at it or is null.
    let status = unsafe {
        libc::getpwuid_r(
            uid,
            &mut found_entry,
            buffer.as_mut_ptr().cast(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() {
        return None;
    }
    let text = |field: *const libc::c_char| {
        if field.is_null() {
            return Vec::new();
        }
        // SAFETY: a non-null field is a NUL-terminated string inside `buffer`, still alive.
        unsafe { CStr::from_ptr(field) }.to_bytes().to_vec()
    };
    Some(Entry {
        name: text(found_entry.pw_name),
        home: text(found_entry.pw_dir),
    })
}

/// The name the user database gives `uid` (`root`), else `uid <n>`.
pub fn name_of(uid: u32) -> String {
    entry(uid)
        .and_then(|e| String::from_utf8(e.name).ok())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// The home folder the user database gives `uid`, when it is an absolute path.
pub fn home_of(uid: u32) -> Option<PathBuf> {
    let home = PathBuf::from(std::ffi::OsStr::from_bytes(&entry(uid)?.home));
    home.is_absolute().then_some(home)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_users_entry_has_a_name_and_an_absolute_home() {
        // SAFETY: getuid only reads this process's real user id.
        let uid = unsafe { libc::getuid() };
        assert!(!name_of(uid).starts_with("uid "), "{}", name_of(uid));
        assert!(home_of(uid).is_some_and(|h| h.is_absolute()));
        assert_eq!(name_of(u32::MAX - 7), format!("uid {}", u32::MAX - 7));
    }
}
