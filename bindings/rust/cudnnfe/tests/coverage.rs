//! Every C function of the header (as cudnnfe-sys declares it) is called by
//! the safe crate, except the few the safe API makes unnecessary, listed
//! here with the reason. A new C function fails this test until it is
//! wrapped (or listed with a reason).
use std::fs;
use std::path::Path;

/// C functions the safe crate deliberately does not call.
const NOT_NEEDED: &[(&str, &str)] = &[
    (
        "cudnnfe_graph_is_built",
        "built-ness is a type: Graph is unbuilt, BuiltGraph is built",
    ),
    (
        "cudnnfe_graph_copy_last_error",
        "a BuiltGraph's queries read the calling thread's message; a Graph is not shared",
    ),
];

fn read_dir_rs(dir: &Path, out: &mut String) {
    for entry in fs::read_dir(dir).expect("read the crate's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            read_dir_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push_str(&fs::read_to_string(&path).expect("read a source file"));
        }
    }
}

#[test]
fn every_c_function_is_called_by_the_safe_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bindings = fs::read_to_string(root.join("../cudnnfe-sys/src/bindings.rs"))
        .expect("read cudnnfe-sys/src/bindings.rs");
    let mut src = String::new();
    read_dir_rs(&root.join("src"), &mut src);

    let declared: Vec<&str> = bindings
        .split("pub fn ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .filter(|name| name.starts_with("cudnnfe_"))
        .collect();
    assert!(
        declared.len() > 100,
        "found only {} functions",
        declared.len()
    );
    let called = |name: &str| {
        src.match_indices(name).any(|(at, _)| {
            // The whole identifier, not a prefix of a longer one.
            !src[at + name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    };
    // Functions every idiomatic layer may still lack (the Go and Julia
    // coverage tests read the same list).
    let pending_text = fs::read_to_string(root.join("../../PENDING_IDIOMATIC.txt"))
        .expect("read bindings/PENDING_IDIOMATIC.txt");
    // The function list ends at the [fields] section (tests/field_coverage.rs).
    let pending: Vec<&str> = pending_text
        .lines()
        .map(str::trim)
        .take_while(|l| *l != "[fields]")
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|name| {
            !called(name) && !NOT_NEEDED.iter().any(|(n, _)| n == name) && !pending.contains(name)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "C functions the safe crate does not call: {missing:?}"
    );
    for (name, _) in NOT_NEEDED {
        assert!(
            declared.contains(name),
            "{name} is listed as not needed but the header has no such function"
        );
        assert!(
            !called(name),
            "{name} is listed as not needed but is called: remove it from the list"
        );
    }
}
