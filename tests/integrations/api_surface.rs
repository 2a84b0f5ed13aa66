//! The public API is deliberate: at most 40 items at the crate root (39 and
//! `test_hooks`; the 38th, `set_recording`, came with the runtime switch, the 39th,
//! `alloc`, with allocations per scope), each listed in
//! `docs/api.md`, and nothing listed there that the root no longer has; and no example
//! or doc binds `latte::init()` without handling its error.
//!
//! The root items are read from the source: `pub use` and `pub mod` in `src/lib.rs`
//! (hidden `__private` aside) and the `#[macro_export]` macros of `src/macros.rs`.

use std::collections::BTreeSet;
use std::path::Path;

const LIMIT: usize = 40;

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The names a `pub use` statement brings in: the last segment of each path (or the
/// name after `as`), across `{...}` groups.
fn used_names(statement: &str) -> Vec<String> {
    let body = statement
        .trim_start_matches("pub use")
        .trim_end_matches(';');
    let flat: String = body
        .chars()
        .map(|c| if "{}".contains(c) { ',' } else { c })
        .collect();
    flat.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty() && *entry != "self")
        .map(|entry| {
            let entry = entry.rsplit(" as ").next().unwrap_or(entry);
            entry.rsplit("::").next().unwrap_or(entry).trim().to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// Every item the crate root exports, read from the source.
fn root_items() -> BTreeSet<String> {
    let lib = read("src/lib.rs");
    let mut items = BTreeSet::new();
    let mut statement = String::new();
    // Root items start in column 0; indented ones belong to inline modules.
    for raw in lib.lines() {
        let line = raw.trim();
        if line.starts_with("//") {
            continue;
        }
        if statement.is_empty() && raw.starts_with("pub use ") || !statement.is_empty() {
            statement.push_str(line);
            statement.push(' ');
            if line.ends_with(';') {
                items.extend(used_names(statement.trim()));
                statement.clear();
            }
        } else if let Some(rest) = raw.strip_prefix("pub mod ") {
            let name = rest.trim_end_matches(['{', ';', ' ']).trim();
            if name != "__private" {
                items.insert(name.to_owned());
            }
        }
    }
    let macros = read("src/macros.rs");
    let lines: Vec<&str> = macros.lines().map(str::trim).collect();
    for pair in lines.windows(2) {
        if pair[0] == "#[macro_export]"
            && let Some(rest) = pair[1].strip_prefix("macro_rules! ")
        {
            items.insert(format!("{}!", rest.trim_end_matches(['{', ' '])));
        }
    }
    items
}

/// The items `docs/api.md` lists in its root sections (everything before "## What
/// moved"), as the backticked names in the first column of each table row.
fn documented() -> BTreeSet<String> {
    let doc = read("docs/api.md");
    let root = doc.split("## What moved").next().unwrap_or(&doc);
    let mut names = BTreeSet::new();
    for line in root.lines().filter(|l| l.starts_with("| `")) {
        let first_cell = line.split('|').nth(1).unwrap_or("");
        for name in first_cell.split('`').skip(1).step_by(2) {
            names.insert(name.to_owned());
        }
    }
    names
}

#[test]
fn the_crate_root_is_small_and_documented() {
    let items = root_items();
    assert!(
        items.contains("Report") && items.contains("latte_start!") && items.contains("collect"),
        "the reader found the root items: {items:?}"
    );
    assert!(
        items.len() <= LIMIT,
        "{} items at the crate root (limit {LIMIT}): {items:?}",
        items.len()
    );
    let documented = documented();
    let missing: Vec<_> = items.difference(&documented).collect();
    assert!(missing.is_empty(), "not listed in docs/api.md: {missing:?}");
    let stale: Vec<_> = documented.difference(&items).collect();
    assert!(
        stale.is_empty(),
        "docs/api.md lists items the root does not have: {stale:?}"
    );
}

#[test]
fn use_statements_are_read_item_by_item() {
    assert_eq!(
        used_names("pub use record::{Id, Scope, pulse};"),
        ["Id", "Scope", "pulse"]
    );
    assert_eq!(
        used_names("pub use a::{b::{C, d}, E as F};"),
        ["C", "d", "F"]
    );
    assert_eq!(used_names("pub use report::Format;"), ["Format"]);
}

#[test]
fn no_example_or_doc_drops_the_error_of_init() {
    // `let _latte = latte::init();` binds a `Result`: an agent that failed to start
    // goes unnoticed. Every example says `?` or `.expect(...)`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "src", "examples", "benches"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                    files.push(path);
                }
            }
        }
    }
    assert!(files.len() > 20, "{files:?}");
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let bound = line.contains("let _latte = latte::init()")
                || line.contains("let latte = latte::init()");
            let handled = ["init()?", "init().expect(", "init().unwrap()"]
                .iter()
                .any(|h| line.contains(h));
            if bound && !handled {
                bad.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "init() bound without handling its error:\n{}",
        bad.join("\n")
    );
}
