//! On Linux with glibc, the two executables agent-env ships are linked statically
//! (`scripts/rustc-static-exe`, run by cargo through `.cargo/config.toml`), unless glibc's static
//! library is missing or `AGENT_ENV_BUILD_DYNAMIC=1` asked for a dynamic link.

use std::path::Path;

use super::support::AGENT_ENV;

/// Whether the ELF file names a program interpreter (`PT_INTERP`): a dynamically linked
/// executable does, a static one does not. 64-bit little-endian files only.
fn names_an_interpreter(elf: &[u8]) -> bool {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(
        (elf[4], elf[5]),
        (2, 1),
        "not a 64-bit little-endian ELF file"
    );
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    let (table, entry_size, entries) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    const PT_INTERP: u32 = 3;
    (0..entries).any(|n| {
        let at = table + n * entry_size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == PT_INTERP
    })
}

/// Where the C compiler finds glibc's static library, when it is installed.
fn static_libc() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(cc)
        .arg("-print-file-name=libc.a")
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    Path::new(&path).is_absolute().then_some(path)
}

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn the_executables_are_static_where_glibc_static_library_is_installed() {
    let dynamic_asked = std::env::var("AGENT_ENV_BUILD_DYNAMIC").is_ok_and(|v| v == "1");
    let Some(archive) = static_libc().filter(|_| !dynamic_asked) else {
        // A dynamic link is what the build does then; what it left is checked by every other test.
        return;
    };
    let explorer =
        agent_env_test_support::workspace_binary("agent-env-explorer", "agent-env-explorer");
    for exe in [Path::new(AGENT_ENV), explorer.as_path()] {
        let elf = std::fs::read(exe).unwrap();
        assert!(
            !names_an_interpreter(&elf),
            "{} is dynamically linked although {archive} is installed: is scripts/rustc-static-exe \
             still cargo's rustc-workspace-wrapper (.cargo/config.toml)?",
            exe.display()
        );
    }
}

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn an_interpreter_is_found_in_a_dynamic_executable() {
    // The check above would pass on anything if it could not see an interpreter. This test binary
    // is linked dynamically: the wrapper leaves every link but the two executables' alone.
    let this = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    assert!(names_an_interpreter(&this));
}
