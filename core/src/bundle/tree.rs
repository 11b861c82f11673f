//! The files of a bundle: a folder on disk, or a bundle built into the binary. Parsing and hashing read
//! through this, so the shipped `hello` needs nothing on disk.

use std::io;
use std::path::{Path, PathBuf};

/// One file of a bundle built into the binary: its path relative to the bundle root, and its bytes.
pub struct EmbeddedFile {
    pub path: &'static str,
    pub bytes: &'static [u8],
}

/// Where a bundle's files come from.
#[derive(Clone, Copy)]
pub enum Tree<'a> {
    Disk(&'a Path),
    Embedded(&'static [EmbeddedFile]),
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

/// What a name in a bundle folder is: one of the bundle's own entries (a kind folder, a task file,
/// an artifact's folder), which ids, lines and paths are made of, or one of an artifact's files
/// (at any depth below its folder), which its record lists by path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameRole {
    BundleEntry,
    ArtifactFile,
}

/// A folder's entries: those whose names can be read, sorted by name, and why each other one is
/// refused (a sentence naming it, with what to do).
#[derive(Debug, Default)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub refused: Vec<String>,
}

impl Listing {
    /// The entries, or the first refusal as an error.
    fn all_or_refused(self) -> io::Result<Vec<Entry>> {
        match self.refused.into_iter().next() {
            Some(why) => Err(io::Error::new(io::ErrorKind::InvalidData, why)),
            None => Ok(self.entries),
        }
    }
}

/// A name in a folder that can't be read, and why.
#[derive(Debug)]
struct RefusedName {
    /// The name, or (for an artifact's file below a folder of it) its path from the artifact's
    /// folder.
    path: std::ffi::OsString,
    is_dir: bool,
    /// Not UTF-8 text (else it holds a control character).
    not_utf8: bool,
}

impl RefusedName {
    fn what(&self) -> &'static str {
        match self.is_dir {
            true => "folder",
            false => "file",
        }
    }

    /// The name as a message shows it: quoted as a shell reads it back (`$'bad\xffname'`).
    fn shown(&self) -> String {
        crate::quote::os_word(&self.path)
    }

    /// Why it is refused, with what to do, for the role its name has.
    fn sentence(&self, role: NameRole) -> String {
        let (name, what) = (self.shown(), self.what());
        match (self.not_utf8, role) {
            (false, NameRole::BundleEntry) => format!(
                "the name {name} holds a control character; rename the {what} (task and artifact ids are made of file names)"
            ),
            (true, NameRole::BundleEntry) => format!(
                "the name {name} is not UTF-8 text; rename the {what} (task and artifact ids are made of file names)"
            ),
            (false, NameRole::ArtifactFile) => format!(
                "the name {name} holds a control character, which every message naming the {what} would send to the terminal; rename the {what}"
            ),
            (true, NameRole::ArtifactFile) => format!(
                "the name {name} is not UTF-8 text, and an artifact's record lists each of its files by its path as UTF-8 text, which can't hold this name; rename the {what}"
            ),
        }
    }
}

/// The most refused names of an artifact's files one message lists; it counts the rest.
const MAX_REFUSED_LISTED: usize = 20;

/// Every name of an artifact's files that can't be read, in one message: one alone as
/// [`RefusedName::sentence`] says it; several listed (at most [`MAX_REFUSED_LISTED`], then how many
/// more), each with why, then what to do.
fn describe_refused(refused: &[RefusedName]) -> String {
    if let [one] = refused {
        return one.sentence(NameRole::ArtifactFile);
    }
    let mut each: Vec<String> = refused
        .iter()
        .take(MAX_REFUSED_LISTED)
        .map(|r| {
            let why = match r.not_utf8 {
                true => "not UTF-8 text",
                false => "holds a control character",
            };
            format!("{} ({why})", r.shown())
        })
        .collect();
    if refused.len() > MAX_REFUSED_LISTED {
        each.push(format!("and {} more", refused.len() - MAX_REFUSED_LISTED));
    }
    format!(
        "{} names of its files can't be read: {}; rename each (an artifact's record lists each file by its path as UTF-8 text, and a control character in a name would reach the terminal in every message naming the file)",
        refused.len(),
        each.join(", ")
    )
}

/// A file name of a bundle folder: UTF-8 text with no control character. Anything else is refused
/// naming the file, never read under a mangled name; the reason depends on its role
/// ([`RefusedName::sentence`]):
/// - a bundle's entry: ids, lines and paths are made of its name (a control character would reach
///   the terminal as an escape sequence, or split a line of the run's output in two);
/// - an artifact's file: the artifact's record lists each file by its path, as text (a JSON
///   string, UTF-8 only), and a run loads the file by that path, so a name that is not UTF-8 can't
///   be recorded as it is; a control character would reach the terminal in every message naming it.
fn entry_name(name: std::ffi::OsString, is_dir: bool) -> Result<String, RefusedName> {
    match name.into_string() {
        Ok(name) if !name.chars().any(char::is_control) => Ok(name),
        Ok(name) => Err(RefusedName {
            path: name.into(),
            is_dir,
            not_utf8: false,
        }),
        Err(name) => Err(RefusedName {
            path: name,
            is_dir,
            not_utf8: true,
        }),
    }
}

impl Tree<'_> {
    /// The entries of the folder at `rel` (`""` is the root), sorted by name; a missing folder is empty.
    /// A name that can't be read (not UTF-8, or holding a control character) fails the listing.
    pub fn list(&self, rel: &str) -> io::Result<Vec<Entry>> {
        self.listing(rel)?.all_or_refused()
    }

    /// As [`Tree::list`], with each name that can't be read refused on its own: the other entries are
    /// listed all the same, so one bad name hides none of its neighbours.
    pub fn listing(&self, rel: &str) -> io::Result<Listing> {
        let (entries, refused) = self.names(rel)?;
        Ok(Listing {
            entries,
            refused: refused
                .iter()
                .map(|r| r.sentence(NameRole::BundleEntry))
                .collect(),
        })
    }

    /// The entries of the folder at `rel` whose names can be read, sorted by name, and the names
    /// that can't.
    fn names(&self, rel: &str) -> io::Result<(Vec<Entry>, Vec<RefusedName>)> {
        let mut refused = Vec::new();
        let mut entries = match self {
            Tree::Disk(root) => {
                let dir = join(root, rel);
                let read = match std::fs::read_dir(&dir) {
                    Ok(r) => r,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Ok((Vec::new(), Vec::new()))
                    }
                    Err(e) => return Err(e),
                };
                let mut out = Vec::new();
                for item in read {
                    let item = item?;
                    let kind = item.file_type()?;
                    let is_dir = if kind.is_symlink() {
                        match std::fs::metadata(item.path()) {
                            // A link to a folder is not followed: it could reach anywhere on
                            // the machine (the original's walk does not follow one either).
                            Ok(m) if m.is_dir() => continue,
                            Ok(m) => {
                                refuse_special(&item.path(), m.file_type())?;
                                false
                            }
                            // A link to a file is read through; a dangling one says so when read.
                            Err(_) => false,
                        }
                    } else {
                        refuse_special(&item.path(), kind)?;
                        kind.is_dir()
                    };
                    match entry_name(item.file_name(), is_dir) {
                        Ok(name) => out.push(Entry { name, is_dir }),
                        Err(why) => refused.push(why),
                    }
                }
                out
            }
            Tree::Embedded(files) => {
                let prefix = if rel.is_empty() {
                    String::new()
                } else {
                    format!("{rel}/")
                };
                let mut out: Vec<Entry> = Vec::new();
                for f in files.iter() {
                    let Some(rest) = f.path.strip_prefix(prefix.as_str()) else {
                        continue;
                    };
                    let (name, is_dir) = match rest.split_once('/') {
                        Some((dir, _)) => (dir, true),
                        None => (rest, false),
                    };
                    if !out.iter().any(|e| e.name == name) {
                        out.push(Entry {
                            name: name.to_string(),
                            is_dir,
                        });
                    }
                }
                out
            }
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        refused.sort_by(|a: &RefusedName, b| a.path.cmp(&b.path));
        Ok((entries, refused))
    }

    /// The bytes of the file at `rel`.
    pub fn read(&self, rel: &str) -> io::Result<Vec<u8>> {
        match self {
            Tree::Disk(root) => {
                let path = join(root, rel);
                std::fs::read(&path).map_err(|e| dangling_or(&path, e))
            }
            Tree::Embedded(files) => files
                .iter()
                .find(|f| f.path == rel)
                .map(|f| f.bytes.to_vec())
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no file {rel}"))),
        }
    }

    /// The sha256 (hex) and size of the file at `rel`, read in chunks: an artifact of any size is
    /// hashed in constant memory.
    pub fn hash(&self, rel: &str) -> io::Result<(String, u64)> {
        use sha2::{Digest, Sha256};
        match self {
            Tree::Disk(root) => {
                let path = join(root, rel);
                let file = std::fs::File::open(&path).map_err(|e| dangling_or(&path, e))?;
                hash_in_chunks(file, || true)?
                    .ok_or_else(|| io::Error::other("the hashing was stopped"))
            }
            Tree::Embedded(_) => {
                let bytes = self.read(rel)?;
                Ok((hex::encode(Sha256::digest(&bytes)), bytes.len() as u64))
            }
        }
    }

    /// Whether a file (not a folder) exists at `rel`.
    pub fn is_file(&self, rel: &str) -> bool {
        match self {
            Tree::Disk(root) => join(root, rel).is_file(),
            Tree::Embedded(files) => files.iter().any(|f| f.path == rel),
        }
    }

    /// Every file below the folder `rel`, as paths relative to that folder, sorted; what
    /// [`is_left_out_of_files`] names (version-control folders, `__pycache__`) is left out. Dot files
    /// (`.env`, `.gitignore`, `.github/`) are files of an artifact like any other. A symbolic link
    /// that leads to nothing is no file to read: the folder is refused, naming every such link in
    /// it at once (not the first one a read meets).
    pub fn files_below(&self, rel: &str) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        let mut broken = Vec::new();
        let mut refused = Vec::new();
        self.walk(rel, "", &mut out, &mut broken, &mut refused)?;
        // Every name that can't be read is said at once, not the first one a walk meets.
        if !refused.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                describe_refused(&refused),
            ));
        }
        if !broken.is_empty() {
            broken.sort_by(|a, b| a.path.cmp(&b.path));
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                describe_broken_links(&broken),
            ));
        }
        out.sort();
        Ok(out)
    }

    fn walk(
        &self,
        base: &str,
        sub: &str,
        out: &mut Vec<String>,
        broken: &mut Vec<BrokenLink>,
        refused: &mut Vec<RefusedName>,
    ) -> io::Result<()> {
        let here = join_rel(base, sub);
        let (entries, mut refused_here) = self.names(&here)?;
        for name in &mut refused_here {
            if !sub.is_empty() {
                name.path = Path::new(sub).join(&name.path).into_os_string();
            }
        }
        refused.extend(refused_here);
        for entry in entries {
            if is_left_out_of_files(&entry.name) {
                continue;
            }
            let child = join_rel(sub, &entry.name);
            if entry.is_dir {
                self.walk(base, &child, out, broken, refused)?;
            } else if let Some(link) = self.broken_link(&join_rel(base, &child), &child) {
                broken.push(link);
            } else {
                out.push(child);
            }
        }
        Ok(())
    }

    /// The link at `rel`, when it is a symbolic link that can't be followed to a file (it leads to
    /// nothing, or round in a loop); `shown` is how a message names it.
    fn broken_link(&self, rel: &str, shown: &str) -> Option<BrokenLink> {
        let Tree::Disk(root) = self else {
            return None;
        };
        let path = join(root, rel);
        let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return None;
        }
        let error = std::fs::metadata(&path).err()?;
        Some(BrokenLink {
            path: shown.to_string(),
            target: std::fs::read_link(&path).ok(),
            leads_nowhere: error.kind() == io::ErrorKind::NotFound,
        })
    }

    /// The symbolic links to folders below the folder `rel` that lead to a folder inside the bundle
    /// (the root of a [`Tree::Disk`]), by their paths in `rel`, sorted, each with where it leads as a
    /// path in the bundle: a listing follows no link to a folder, so what they lead to is left out of
    /// `rel`'s files, and one that leads outside the bundle is named by [`super::links`].
    pub fn folder_links_inside(&self, rel: &str) -> Vec<(String, String)> {
        let Tree::Disk(root) = self else {
            return Vec::new();
        };
        let Ok(root) = root.canonicalize() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        each_link_below(&root, rel, &mut |path, on_disk| {
            let Ok(target) = on_disk.canonicalize() else {
                return;
            };
            if let (true, Ok(inside)) = (target.is_dir(), target.strip_prefix(&root)) {
                found.push((path.to_string(), inside.to_string_lossy().into_owned()));
            }
        });
        found.sort();
        found
    }

    /// The file's path on disk, when it has one.
    pub fn disk_path(&self, rel: &str) -> Option<PathBuf> {
        match self {
            Tree::Disk(root) => Some(join(root, rel)),
            Tree::Embedded(_) => None,
        }
    }
}

/// Every symbolic link below the folder `rel` of `root`, walked as a listing walks the files (no link
/// followed, what is never a file left out): `visit` gets each one's path below `rel` and its path on
/// disk. The one walk both the links to folders inside the bundle and [`super::links`] read.
pub fn each_link_below(root: &Path, rel: &str, visit: &mut dyn FnMut(&str, &Path)) {
    walk_links(root, rel, "", visit);
}

fn walk_links(root: &Path, base: &str, sub: &str, visit: &mut dyn FnMut(&str, &Path)) {
    let Ok(entries) = std::fs::read_dir(join(root, &join_rel(base, sub))) else {
        return;
    };
    for entry in entries.flatten() {
        let (Ok(name), Ok(kind)) = (entry.file_name().into_string(), entry.file_type()) else {
            continue;
        };
        if is_left_out_of_files(&name) {
            continue;
        }
        let path = join_rel(sub, &name);
        if kind.is_dir() {
            walk_links(root, base, &path, visit);
        } else if kind.is_symlink() {
            visit(&path, &entry.path());
        }
    }
}

/// A named pipe, socket or device is no file of a bundle: reading one could wait for ever (a pipe
/// with no writer) or never end (a device), so it is refused, naming it.
fn refuse_special(path: &Path, kind: std::fs::FileType) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let what = if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}, not a regular file; a bundle or an artifact holds files and folders only, so remove it",
            path.display()
        ),
    ))
}

/// Dot entries and `__pycache__` are not part of a bundle's own structure (its kind folders).
pub fn is_ignored_name(name: &str) -> bool {
    name.starts_with('.') || name == "__pycache__"
}

/// What is never one of an artifact's files: version control's own folders, Python's bytecode
/// caches and the Finder's folder settings, which change without any file of the artifact changing.
pub fn is_left_out_of_files(name: &str) -> bool {
    matches!(name, ".git" | ".hg" | ".svn" | "__pycache__" | ".DS_Store")
}

/// `a/b` from `a` and `b`, where either may be empty.
pub fn join_rel(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

fn join(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// A symbolic link among a folder's files that can't be followed to a file.
struct BrokenLink {
    /// Its path in the folder listed.
    path: String,
    /// What it points to, as written in the link.
    target: Option<PathBuf>,
    /// Whether what it points to does not exist (else following it goes round in a loop).
    leads_nowhere: bool,
}

impl BrokenLink {
    fn describe(&self) -> String {
        let to = match &self.target {
            Some(target) => format!(" to {}", target.display()),
            None => String::new(),
        };
        match self.leads_nowhere {
            true => format!("{} is a symbolic link{to}, which does not exist", self.path),
            false => format!(
                "{} is a symbolic link{to}, which can't be followed (a loop of links)",
                self.path
            ),
        }
    }
}

/// Every link of `broken` (one at least), in one sentence, with what to do.
fn describe_broken_links(broken: &[BrokenLink]) -> String {
    let each: Vec<String> = broken.iter().map(BrokenLink::describe).collect();
    match each.len() {
        1 => format!("{}; remove the link or restore what it points to", each[0]),
        _ => format!(
            "{}; remove each link or restore what it points to",
            each.join(", ")
        ),
    }
}

/// `error`, opening `path`, told as a dangling symbolic link when that is what `path` is.
fn dangling_or(path: &Path, error: io::Error) -> io::Error {
    if error.kind() != io::ErrorKind::NotFound {
        return error;
    }
    match std::fs::read_link(path) {
        Ok(target) => io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "it is a symbolic link to {}, which does not exist; remove the link or restore what it points to",
                target.display()
            ),
        ),
        Err(_) => error,
    }
}

/// The most bytes [`hash_in_chunks`] hashes between two looks at whether to go on.
pub const HASH_CHUNK: usize = 256 * 1024;

/// The sha256 (hex) and size of all `reader` gives, read [`HASH_CHUNK`] bytes at a time (constant
/// memory for a file of any size); `None` when `go_on` says, before a chunk, to stop.
pub fn hash_in_chunks(
    mut reader: impl io::Read,
    mut go_on: impl FnMut() -> bool,
) -> io::Result<Option<(String, u64)>> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; HASH_CHUNK];
    let mut size = 0u64;
    loop {
        if !go_on() {
            return Ok(None);
        }
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    Ok(Some((hex::encode(hasher.finalize()), size)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn a_file_is_hashed_in_chunks_to_the_same_digest_as_whole() {
        let dir = tempfile::tempdir().unwrap();
        // Larger than one chunk, and not a multiple of it.
        let bytes: Vec<u8> = (0..600_001u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("blob.bin"), &bytes).unwrap();
        let (sha, size) = Tree::Disk(dir.path()).hash("blob.bin").unwrap();
        assert_eq!(sha, hex::encode(Sha256::digest(&bytes)));
        assert_eq!(size, 600_001);
        static FILES: [EmbeddedFile; 1] = [EmbeddedFile {
            path: "a.txt",
            bytes: b"hello\n",
        }];
        let (sha, size) = Tree::Embedded(&FILES).hash("a.txt").unwrap();
        assert_eq!(sha, hex::encode(Sha256::digest(b"hello\n")));
        assert_eq!(size, 6);
    }

    #[test]
    fn a_name_with_a_control_character_or_not_utf8_is_refused_naming_it() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("esc\u{1b}[2Jred.json"), "[]").unwrap();
        let err = Tree::Disk(dir.path()).list("").unwrap_err().to_string();
        assert!(
            err.contains(r"$'esc\e[2Jred.json' holds a control character; rename the file"),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("esc\u{1b}[2Jred.json")).unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"bad\xffname.json");
        std::fs::write(dir.path().join(bad), "[]").unwrap();
        let err = Tree::Disk(dir.path()).list("").unwrap_err().to_string();
        assert!(
            err.contains(r"$'bad\xffname.json' is not UTF-8 text"),
            "{err}"
        );
    }

    #[test]
    fn every_refused_name_of_an_artifacts_files_is_said_at_once() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/sub")).unwrap();
        std::fs::write(dir.path().join("a/ok.txt"), "x").unwrap();
        std::fs::write(dir.path().join("a/new\nline"), "x").unwrap();
        std::fs::write(dir.path().join("a/sub/t\tab"), "x").unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"bad\xff");
        std::fs::write(dir.path().join("a").join(bad), "x").unwrap();
        let err = Tree::Disk(dir.path())
            .files_below("a")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                r"3 names of its files can't be read: $'bad\xff' (not UTF-8 text), $'new\nline' (holds a control character), $'sub/t\tab' (holds a control character); rename each"
            ),
            "{err}"
        );
        for i in 0..25 {
            std::fs::write(dir.path().join(format!("a/e{i:02}\u{1b}")), "x").unwrap();
        }
        let err = Tree::Disk(dir.path())
            .files_below("a")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("28 names of its files can't be read: "),
            "{err}"
        );
        assert!(err.contains(", and 8 more; rename each"), "{err}");
    }

    #[test]
    fn a_link_to_a_folder_is_not_followed_and_a_dangling_one_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("bundle");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        std::fs::write(root.join("a/real.txt"), "r").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("a/elsewhere")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("a/linked.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("gone"), root.join("a/broken")).unwrap();
        let tree = Tree::Disk(&root);
        let err = tree.files_below("a").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "broken is a symbolic link to {}, which does not exist; remove the link or restore what it points to",
                root.join("gone").display()
            )
        );
        std::os::unix::fs::symlink("/nowhere", root.join("a/sub-broken")).unwrap();
        std::fs::create_dir_all(root.join("a/deeper")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("a/deeper/loop")).unwrap();
        let err = tree.files_below("a").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "broken is a symbolic link to {}, which does not exist, deeper/loop is a symbolic link to loop, which can't be followed (a loop of links), sub-broken is a symbolic link to /nowhere, which does not exist; remove each link or restore what it points to",
                root.join("gone").display()
            )
        );
        for gone in ["a/broken", "a/sub-broken", "a/deeper/loop"] {
            std::fs::remove_file(root.join(gone)).unwrap();
        }
        assert_eq!(tree.files_below("a").unwrap(), ["linked.txt", "real.txt"]);
        assert_eq!(tree.read("a/linked.txt").unwrap(), b"s");
        std::os::unix::fs::symlink(root.join("gone"), root.join("a/broken")).unwrap();
        let err = tree.hash("a/broken").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "it is a symbolic link to {}, which does not exist; remove the link or restore what it points to",
                root.join("gone").display()
            )
        );
    }
}
