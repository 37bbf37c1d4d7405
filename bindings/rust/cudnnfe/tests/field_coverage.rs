//! Every field of every C options struct (`cudnnfe_*_options_t`, as
//! abi/manifest.json lists them) is written by the safe crate when it fills
//! that struct (a function of src/ that names the struct writes
//! `raw.<field>`), or is listed for "rust" under `[fields]` in
//! bindings/PENDING_IDIOMATIC.txt with a reason. A field added to the header
//! fails this test until the crate sets it.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The little of JSON the manifest needs: objects, arrays, strings,
/// numbers, true/false/null.
#[derive(Debug)]
enum Json {
    Obj(BTreeMap<String, Json>),
    Arr(Vec<Json>),
    Str(String),
    Other,
}

impl Json {
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(m) => m.get(key).unwrap_or(&Json::Other),
            _ => &Json::Other,
        }
    }
    fn items(&self) -> &[Json] {
        match self {
            Json::Arr(v) => v,
            _ => &[],
        }
    }
    fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn parse(text: &[u8], at: &mut usize) -> Json {
    let skip = |at: &mut usize| {
        while text[*at].is_ascii_whitespace() {
            *at += 1
        }
    };
    skip(at);
    match text[*at] {
        b'{' => {
            *at += 1;
            let mut m = BTreeMap::new();
            loop {
                skip(at);
                if text[*at] == b'}' {
                    *at += 1;
                    return Json::Obj(m);
                }
                let Json::Str(key) = parse(text, at) else {
                    panic!("object key at byte {at}")
                };
                skip(at);
                assert_eq!(text[*at], b':');
                *at += 1;
                m.insert(key, parse(text, at));
                skip(at);
                if text[*at] == b',' {
                    *at += 1;
                }
            }
        }
        b'[' => {
            *at += 1;
            let mut v = Vec::new();
            loop {
                skip(at);
                if text[*at] == b']' {
                    *at += 1;
                    return Json::Arr(v);
                }
                v.push(parse(text, at));
                skip(at);
                if text[*at] == b',' {
                    *at += 1;
                }
            }
        }
        b'"' => {
            *at += 1;
            let mut s = Vec::new();
            while text[*at] != b'"' {
                if text[*at] == b'\\' {
                    *at += 1; // the manifest's escapes are \" \\ \n and \uXXXX in docs
                }
                s.push(text[*at]);
                *at += 1;
            }
            *at += 1;
            Json::Str(String::from_utf8_lossy(&s).into_owned())
        }
        _ => {
            while !b",}]".contains(&text[*at]) {
                *at += 1;
            }
            Json::Other
        }
    }
}

/// Top-level `fn` items of the sources, one string each.
fn functions(src: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("fn ") || t.starts_with("pub fn ") || t.starts_with("pub(crate) fn ") {
            out.push(String::new());
        }
        let last = out.last_mut().expect("one chunk");
        last.push_str(line);
        last.push('\n');
    }
    out
}

fn writes(scope: &str, field: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    scope.match_indices(&format!(".{field}")).any(|(at, m)| {
        let rest = &scope[at + m.len()..];
        if rest.starts_with(ident) {
            return false;
        }
        let rest = rest.trim_start();
        (rest.starts_with('=') && !rest.starts_with("=="))
            || rest.starts_with(".iter_mut()")
            || scope[..at].ends_with("&mut raw")
    })
}

/// (functions pending, fields pending for "rust").
fn pending(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = fs::read_to_string(root.join("../../PENDING_IDIOMATIC.txt"))
        .expect("read bindings/PENDING_IDIOMATIC.txt");
    let (mut funcs, mut fields) = (BTreeSet::new(), BTreeSet::new());
    let mut in_fields = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "[fields]" {
            in_fields = true;
        } else if !in_fields {
            funcs.insert(line.to_string());
        } else {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(
                words.len() >= 3 && words[1].ends_with(':'),
                "PENDING_IDIOMATIC.txt: {line:?} is not \"<binding> <struct>.<field>: <reason>\""
            );
            if words[0] == "rust" {
                fields.insert(words[1].trim_end_matches(':').to_string());
            }
        }
    }
    (funcs, fields)
}

#[test]
fn every_option_field_is_set_by_the_safe_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read(root.join("../../../abi/manifest.json")).expect("read abi/manifest.json");
    let manifest = parse(&text, &mut 0);
    let mut src = String::new();
    for entry in fs::read_dir(root.join("src")).expect("read src/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            src.push_str(&fs::read_to_string(&path).expect("read a source file"));
        }
    }
    let fns = functions(&src);
    let (pending_funcs, mut pending_fields) = pending(root);
    let (mut missing, mut stale, mut checked) = (Vec::new(), Vec::new(), 0);
    for s in manifest.get("structs").items() {
        let typedef = s.get("typedef").str().expect("typedef");
        let is_options = typedef.ends_with("_options_t");
        if !is_options
            || s.get("init")
                .str()
                .is_some_and(|i| pending_funcs.contains(i))
        {
            continue;
        }
        let stem = &typedef[..typedef.len() - 2];
        let scope: String = fns.iter().filter(|f| f.contains(stem)).cloned().collect();
        for f in s.get("fields").items() {
            let name = f.get("name").str().expect("field name");
            if name == "struct_size" {
                continue;
            }
            checked += 1;
            let key = format!("{typedef}.{name}");
            let listed = pending_fields.remove(&key);
            match (writes(&scope, name), listed) {
                (true, true) => stale.push(key),
                (false, false) => missing.push(key),
                _ => {}
            }
        }
    }
    stale.extend(pending_fields);
    assert!(checked > 100, "checked only {checked} fields");
    assert!(
        missing.is_empty(),
        "option fields the safe crate never sets (wrap them, or list them as \
         \"rust S.f: reason\" under [fields] in bindings/PENDING_IDIOMATIC.txt): {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "bindings/PENDING_IDIOMATIC.txt lists Rust fields that are set or gone: {stale:?}"
    );
}
