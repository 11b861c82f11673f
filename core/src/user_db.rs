//! The system's user database: a user's name and home folder, for the paths and the messages that
//! name whose a folder is.
//!
//! `/etc/passwd` is read first, by this module. Only a dynamically linked agent-env then asks the C
//! library (`getpwuid_r`, which also reaches LDAP, SSSD or systemd's users): a static executable (the
//! default build on glibc) would have glibc load those lookup modules into a process they were not
//! built for, and for a uid `/etc/passwd` does not list (a container run as `--user 1234`) systemd's
//! module crashes it.

use std::ffi::CStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The name and home folder the user database gives a uid.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    name: Vec<u8>,
    home: Vec<u8>,
}

/// Where the local users are listed, one `name:password:uid:gid:gecos:home:shell` line each.
const PASSWD_FILE: &str = "/etc/passwd";

fn entry(uid: u32) -> Option<Entry> {
    if let Some(found) = std::fs::read(PASSWD_FILE)
        .ok()
        .and_then(|text| entry_in(&text, uid))
    {
        return Some(found);
    }
    if statically_linked() {
        return None;
    }
    entry_from_libc(uid)
}

/// The entry of `uid` in the text of a passwd file; a malformed line is passed over.
fn entry_in(passwd: &[u8], uid: u32) -> Option<Entry> {
    passwd.split(|b| *b == b'\n').find_map(|line| {
        if line.starts_with(b"#") {
            return None;
        }
        let fields: Vec<&[u8]> = line.split(|b| *b == b':').collect();
        let [name, _, line_uid, _, _, home, ..] = fields[..] else {
            return None;
        };
        let line_uid: u32 = std::str::from_utf8(line_uid).ok()?.parse().ok()?;
        (line_uid == uid).then(|| Entry {
            name: name.to_vec(),
            home: home.to_vec(),
        })
    })
}

/// Whether this process was started with no dynamic loader (a static executable).
fn statically_linked() -> bool {
    // SAFETY: getauxval only reads this process's auxiliary vector.
    unsafe { libc::getauxval(libc::AT_BASE) == 0 }
}

fn entry_from_libc(uid: u32) -> Option<Entry> {
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

/// The name the user database gives `uid` (`root`), when it lists one.
pub fn name(uid: u32) -> Option<String> {
    entry(uid)
        .and_then(|e| String::from_utf8(e.name).ok())
        .filter(|name| !name.is_empty())
}

/// The name the user database gives `uid` (`root`), else `uid <n>`.
pub fn name_of(uid: u32) -> String {
    name(uid).unwrap_or_else(|| format!("uid {uid}"))
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

    #[test]
    fn a_passwd_file_gives_the_entry_of_its_uid_and_passes_over_what_is_malformed() {
        let passwd = b"# local users\nroot:x:0:0:root:/root:/bin/bash\nbroken line\nhalf:x:12\n\
            ann:x:1000:1000:Ann,,,:/home/ann:/bin/sh\nnouid:x:abc:1:: /x:/bin/sh\n";
        assert_eq!(
            entry_in(passwd, 1000),
            Some(Entry {
                name: b"ann".to_vec(),
                home: b"/home/ann".to_vec()
            })
        );
        assert_eq!(entry_in(passwd, 0).unwrap().home, b"/root".to_vec());
        assert_eq!(entry_in(passwd, 12), None);
        assert_eq!(entry_in(passwd, 54321), None);
    }
}
