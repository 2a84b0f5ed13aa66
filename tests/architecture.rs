//! Own binary: it checks `src/`'s shape (`docs/architecture.md`), and alone links `syn`,
//! which parses every file; a visitor collects the paths from the crate root (`crate::`,
//! `latte::`, `::latte::`, `super::`s that climb that far) in `use` trees, code, types
//! and the arguments of macros that parse as expressions or items (doc links are no
//! imports). The rules, each with a fixture: a module imports only what [`FLOW`] allows,
//! with no cycle; a path from the root names a module (`crate::record::Id`, never
//! `crate::Id`: `lib.rs` is the front door, not a hub); no `#[path]` attribute.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::{self, Visit};
use syn::{Expr, Ident, Meta, Token, UseTree, punctuated::Punctuated};

/// The direction rule, line by line as in `docs/architecture.md`: a module may import
/// the modules to its right on its lines (directly or further along) and the
/// [`LEAVES`]. A top-level module of `src/` on no line is a violation.
const FLOW: &[&[&str]] = &[
    &["agent", "analyze", "collect", "record", "clock", "platform"],
    &["analyze", "report"],
    &["agent", "exporter", "report"],
    &["agent", "flight", "analyze"],
    &["flight", "report"],
    &["agent", "series", "analyze"],
    &["series", "report"],
    &["agent", "tree", "analyze"],
    &["tree", "report"],
    &["agent", "frames", "analyze"],
    &["frames", "report"],
    &["integrations", "record"],
    &["macros"],
    &["error", "config"],
    &["diagnostics"],
    &["packed"],
    &["allocs"],
];

/// Modules every other module may import; among themselves, only as [`FLOW`] says.
const LEAVES: &[&str] = &["allocs", "config", "diagnostics", "error", "packed"];

/// Module -> the modules it imports (or may import).
type Graph<'a> = BTreeMap<&'a str, BTreeSet<&'a str>>;

/// The modules `module` may import.
fn allowed(module: &str) -> BTreeSet<&'static str> {
    let mut flow = Graph::new();
    for pair in FLOW.iter().flat_map(|line| line.windows(2)) {
        flow.entry(pair[0]).or_default().insert(pair[1]);
    }
    let mut allowed = reach(&flow, module);
    if !LEAVES.contains(&module) {
        allowed.extend(LEAVES);
    }
    allowed
}

/// The modules `from` reaches in `graph`, directly or further along.
fn reach<'a>(graph: &Graph<'a>, from: &str) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = graph.get(from).into_iter().flatten().copied().collect();
    while let Some(next) = todo.pop() {
        if seen.insert(next) {
            todo.extend(graph.get(next).into_iter().flatten());
        }
    }
    seen
}

/// Every violation in `files` (path from the package root, text), then the cycles.
fn check<S: AsRef<str>>(files: &[(S, S)]) -> Vec<String> {
    let mut modules: BTreeSet<String> = FLOW.concat().iter().map(|m| m.to_string()).collect();
    let mut found = Vec::new();
    for (path, _) in files {
        if let Some(module) = module_of(path.as_ref()).first()
            && modules.insert(module.clone())
        {
            found.push(format!("src/{module}: {module} is on no line of FLOW"));
        }
    }
    let mut imports = Graph::new();
    for (path, text) in files {
        let (path, module) = (path.as_ref(), module_of(path.as_ref()));
        let syntax = syn::parse_file(text.as_ref()).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut walker = Walker {
            depth: module.len(),
            ..Walker::default()
        };
        walker.visit_file(&syntax);
        for line in walker.path_attributes {
            found.push(format!("{path}:{line}: a #[path] attribute"));
        }
        let Some(own) = module.first().and_then(|own| modules.get(own)) else {
            continue; // lib.rs: the root itself
        };
        for (line, name) in walker.roots {
            let (place, allowed) = (format!("{path}:{line}"), allowed(own));
            if !modules.contains(&name) {
                found.push(format!("{place}: {name} is taken through the crate root"));
            } else if name != *own && !allowed.contains(name.as_str()) {
                let allowed = allowed.into_iter().collect::<Vec<_>>().join(", ");
                found.push(format!("{place}: {own} may not import {name} ({allowed})"));
            }
            if let Some(to) = modules.get(&name).filter(|to| *to != own) {
                imports.entry(own.as_str()).or_default().insert(to.as_str());
            }
        }
    }
    let cyclic = |module: &&str| reach(&imports, module).contains(module);
    let looped: Vec<&str> = imports.keys().copied().filter(cyclic).collect();
    if !looped.is_empty() {
        found.push(format!("import cycle among {}", looped.join(", ")));
    }
    found
}

/// A file's module path: `src/record/ring/mod.rs` is `[record, ring]`, `src/lib.rs` `[]`.
fn module_of(path: &str) -> Vec<String> {
    let inner = path.trim_start_matches("src/").trim_end_matches(".rs");
    let inner = inner.trim_end_matches("/mod");
    let module = inner.split('/').map(String::from);
    module.filter(|_| inner != "lib").collect()
}

/// What one file holds of the rules: its paths from the crate root and `#[path]`s.
#[derive(Default)]
struct Walker {
    /// The module depth where the visit is: the file's, plus the inline modules around.
    depth: usize,
    /// (line, the segment after the root) of each path from the root.
    roots: Vec<(usize, String)>,
    /// The line of each `#[path]` attribute, also inside a `cfg_attr`.
    path_attributes: Vec<usize>,
}

impl Walker {
    /// Records the path if it starts at the crate root.
    fn path(&mut self, leading_colon: bool, segments: &[(String, usize)]) {
        let climbs = segments.iter().take_while(|(s, _)| s == "super").count();
        let skip = match segments.first().map(|(first, _)| first.as_str()) {
            Some("crate") if !leading_colon => 1,
            Some("latte") => 1,
            Some("super") if self.depth > 0 && climbs >= self.depth => climbs,
            _ => return,
        };
        if let Some((name, line)) = segments.get(skip).filter(|(name, _)| name != "self") {
            self.roots.push((*line, name.clone()));
        }
    }

    /// Records each path a `use` tree names (a glob as `*`).
    fn use_tree(&mut self, leading_colon: bool, tree: &UseTree, mut prefix: Vec<(String, usize)>) {
        let (last, rest) = match tree {
            UseTree::Path(path) => (segment(&path.ident), Some(&*path.tree)),
            UseTree::Name(name) => (segment(&name.ident), None),
            UseTree::Rename(rename) => (segment(&rename.ident), None),
            UseTree::Glob(glob) => (("*".into(), glob.star_token.spans[0].start().line), None),
            UseTree::Group(group) => {
                let each = |item| self.use_tree(leading_colon, item, prefix.clone());
                return group.items.iter().for_each(each);
            }
        };
        prefix.push(last);
        match rest {
            Some(rest) => self.use_tree(leading_colon, rest, prefix),
            None => self.path(leading_colon, &prefix),
        }
    }
}

/// A path segment and its line.
fn segment(ident: &Ident) -> (String, usize) {
    (ident.to_string(), ident.span().start().line)
}

impl Visit<'_> for Walker {
    fn visit_item_mod(&mut self, item: &syn::ItemMod) {
        let inline = usize::from(item.content.is_some());
        self.depth += inline;
        visit::visit_item_mod(self, item);
        self.depth -= inline;
    }

    fn visit_path(&mut self, path: &syn::Path) {
        let segments: Vec<_> = path.segments.iter().map(|s| segment(&s.ident)).collect();
        self.path(path.leading_colon.is_some(), &segments);
        visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &syn::ItemUse) {
        self.use_tree(item.leading_colon.is_some(), &item.tree, Vec::new());
        visit::visit_item_use(self, item);
    }

    fn visit_macro(&mut self, mac: &syn::Macro) {
        visit::visit_macro(self, mac);
        if let Ok(args) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
            args.iter().for_each(|arg| self.visit_expr(arg));
        } else if let Ok(items) = mac.parse_body::<syn::File>() {
            self.visit_file(&items);
        } // else a `macro_rules!` body (`$crate::` is where the macro expands) or a DSL
    }

    fn visit_attribute(&mut self, attr: &syn::Attribute) {
        let path = attr.path();
        let listed = |meta: &Meta| meta.path().is_ident("path");
        let conditional = || {
            let metas = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated);
            metas.is_ok_and(|metas| metas.iter().skip(1).any(listed))
        };
        if path.is_ident("path") || path.is_ident("cfg_attr") && conditional() {
            self.path_attributes
                .push(attr.pound_token.spans[0].start().line);
        }
        visit::visit_attribute(self, attr);
    }
}

#[test]
fn src_follows_the_architecture() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files = Vec::new();
    for path in glob::glob(&format!("{root}/src/**/*.rs")).expect("a valid pattern") {
        let path = path.expect("a readable directory");
        let text = std::fs::read_to_string(&path).expect("a source file");
        let inner = path.strip_prefix(root).expect("under the package");
        files.push((inner.to_string_lossy().replace('\\', "/"), text));
    }
    assert!(files.len() > 10, "src/ not found");
    let found = check(&files).join("\n");
    assert!(found.is_empty(), "see docs/architecture.md:\n{found}");
}

#[test]
fn a_clean_tree_passes_and_doc_links_are_not_imports() {
    let lib = "mod agent;\npub use crate::agent::B;\npub mod __private { pub use crate::Id; }";
    let agent = "//! [`Report`](crate::Report), [`init`](latte::record::init).\n\
                 use crate::{analyze::Report, record::{self, Id}};\n\
                 fn f() { assert!(crate::record::on(), \"crate::Report\") }";
    let drain = "use super::Builder;\nfn f() -> super::super::error::Error { todo!() }";
    let record = "//! [`Guard`](crate::agent::Guard)\n// use crate::agent::Guard;\n\
                  pub(in crate::record) mod ring;\nfn now() -> u64 { ::latte::clock::read() }\n\
                  mod tests { use super::*; }\nmacro_rules! go { () => { $crate::__private::go() } }";
    let tree = [
        ("src/lib.rs", lib),
        ("src/agent/mod.rs", agent),
        ("src/agent/drain.rs", drain),
        ("src/record/mod.rs", record),
    ];
    assert_eq!(check(&tree), [""; 0]);
}

#[test]
fn an_upward_import_is_reported_wherever_it_is_written() {
    let record = "use crate::{clock::Mode,\n    agent::Builder};\n\
                  fn f() -> latte::agent::Guard { g(::latte::agent::init()) }\n\
                  fn g() { assert!(crate::agent::running()); }\n";
    let ring = "mod tests { use super::super::Slot; }\nuse super::super::agent::Guard;\n";
    let up =
        "record may not import agent (allocs, clock, config, diagnostics, error, packed, platform)";
    let places = ["mod.rs:2", "mod.rs:3", "mod.rs:3", "mod.rs:4", "ring.rs:2"];
    let tree = [("src/record/mod.rs", record), ("src/record/ring.rs", ring)];
    let expected = places.map(|at| format!("src/record/{at}: {up}"));
    assert_eq!(check(&tree), expected);
}

#[test]
fn a_cycle_is_reported_once() {
    let tree = [
        ("src/agent.rs", "use crate::analyze::Report;"),
        ("src/analyze.rs", "use crate::collect::Capture;"),
        ("src/collect.rs", "\nuse crate::agent::Guard;"),
    ];
    let up = "src/collect.rs:2: collect may not import agent \
              (allocs, clock, config, diagnostics, error, packed, platform, record)";
    let cycle = "import cycle among agent, analyze, collect";
    assert_eq!(check(&tree), [up, cycle]);
}

#[test]
fn imports_through_the_crate_root_are_reported() {
    let drain = "use crate::Report;\nuse crate::{record::Id, Error};\n\
                 fn go() { crate::start(); latte::__private::stop() }\n";
    let names = ["1: Report", "2: Error", "3: start", "3: __private"];
    let root = |at| format!("src/agent/drain.rs:{at} is taken through the crate root");
    assert_eq!(check(&[("src/agent/drain.rs", drain)]), names.map(root));
}

#[test]
fn a_path_attribute_is_reported() {
    let text = "#[cfg(target_arch = \"x86_64\")]\n#[path = \"x.rs\"]\nmod arch;\n\
                #[cfg_attr(unix, path = \"unix.rs\")]\nmod os;\nfn f(path: &str) {}\n";
    let found = |line| format!("src/clock.rs:{line}: a #[path] attribute");
    assert_eq!(check(&[("src/clock.rs", text)]), [2, 4].map(found));
}

#[test]
fn a_module_missing_from_the_table_is_reported() {
    let tree = [("src/telemetry/mod.rs", ""), ("src/telemetry/sink.rs", "")];
    let missing = "src/telemetry: telemetry is on no line of FLOW";
    assert_eq!(check(&tree), [missing]);
}

#[test]
fn the_table_points_one_way() {
    for module in FLOW.concat() {
        let (allowed, leaf) = (allowed(module), LEAVES.contains(&module));
        let above = allowed.iter().any(|m| leaf && !LEAVES.contains(m));
        let one_way = !allowed.contains(module) && !above;
        assert!(one_way, "{module} may import {allowed:?}");
    }
}

/// The files of `files` (paths under the package, `src/...`) that the module map
/// `map` (the code block under "The module map" in `docs/architecture.md`) does not
/// name. An entry is a line whose first word, indented by two spaces per level, ends
/// in `.rs` or `/` (a folder): its path is its folders' and its own. A file is named by
/// its entry, or in the text of an entry (the line and the lines indented under it)
/// as a path from that entry's folder (`ring/`'s "(mod.rs)", `calibrate.rs`'s
/// "calibrate/overheads.rs"). Tests and loom models (`tests.rs`, files under a
/// `tests/` folder, `loom_model.rs`) sit beside what they check and need no entry.
fn unmapped(map: &str, files: &[String]) -> Vec<String> {
    let (named, _) = map_names(map);
    let beside_tests = |f: &str| {
        f.ends_with("/tests.rs") || f.contains("/tests/") || f.ends_with("/loom_model.rs")
    };
    files
        .iter()
        .filter(|f| !beside_tests(f) && !named.contains(f.as_str()))
        .cloned()
        .collect()
}

/// The entries of `map` (as [`unmapped`] reads it) that are no file of `files`.
fn stale(map: &str, files: &[String]) -> Vec<String> {
    let (_, entries) = map_names(map);
    entries.into_iter().filter(|e| !files.contains(e)).collect()
}

/// The files `map` names (entries and paths in their text), and its file entries.
fn map_names(map: &str) -> (BTreeSet<String>, Vec<String>) {
    let mut named = BTreeSet::new();
    let mut entries = Vec::new();
    let mut folders: Vec<String> = Vec::new(); // the folder path at each level
    let mut here = String::new(); // the folder the current entry's text is relative to
    for line in map.lines() {
        let indent = line.len() - line.trim_start().len();
        let word = line.split_whitespace().next().unwrap_or("");
        let entry = indent < 16 && (word.ends_with(".rs") || word.ends_with('/'));
        if entry {
            let level = indent / 2;
            folders.truncate(level);
            let parent = folders.concat();
            if word.ends_with('/') {
                folders.push(word.to_owned());
                here = format!("{parent}{word}");
            } else {
                named.insert(format!("{parent}{word}"));
                entries.push(format!("{parent}{word}"));
                here = parent;
            }
        }
        for token in line.split(|c: char| !(c.is_alphanumeric() || "_/.".contains(c))) {
            let token = token.trim_end_matches('.');
            if token.ends_with(".rs") && !(entry && token == word) {
                named.insert(format!("{here}{token}"));
            }
        }
    }
    (named, entries)
}

/// The code block under "## The module map" in `text`.
fn module_map(text: &str) -> &str {
    let after = &text[text.find("## The module map").expect("the section")..];
    let block = &after[after.find("```").expect("its block") + 3..];
    &block[..block.find("```").expect("the block's end")]
}

#[test]
fn the_module_map_names_every_file_of_src_and_no_other() {
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/docs/architecture.md")).unwrap();
    let files: Vec<String> = glob::glob(&format!("{root}/src/**/*.rs"))
        .expect("a valid pattern")
        .map(|p| {
            let p = p.expect("a readable directory");
            let inner = p.strip_prefix(root).expect("under the package");
            inner.to_string_lossy().replace('\\', "/")
        })
        .collect();
    assert!(files.len() > 10, "src/ not found");
    let missing = unmapped(module_map(&doc), &files);
    assert!(
        missing.is_empty(),
        "docs/architecture.md's module map names none of:\n{}",
        missing.join("\n")
    );
    let gone = stale(module_map(&doc), &files);
    assert!(
        gone.is_empty(),
        "docs/architecture.md's module map names files src/ does not have:\n{}",
        gone.join("\n")
    );
}

#[test]
fn the_module_map_check_reads_entries_folders_and_their_text() {
    let map = "\nsrc/\n  lib.rs            the front door\n  agent/            runs it\n    \
               mod.rs          init\n    signals/        the rules (mod.rs), the handler\n    \
               calibrate.rs    calibrate/overheads.rs measures\n                    \
               (unix.rs is not here)\n  record/           the hot path\n";
    let files = [
        "src/lib.rs",
        "src/agent/mod.rs",
        "src/agent/signals/mod.rs",
        "src/agent/signals/unix.rs",
        "src/agent/calibrate.rs",
        "src/agent/calibrate/overheads.rs",
        "src/agent/unix.rs",
        "src/agent/drain.rs",
        "src/record/tests.rs",
        "src/record/ring/loom_model.rs",
    ]
    .map(String::from);
    assert_eq!(
        unmapped(map, &files),
        ["src/agent/signals/unix.rs", "src/agent/drain.rs"]
    );
    let without_lib = &files[1..];
    assert_eq!(stale(map, without_lib), ["src/lib.rs"]);
}

/// The code lines of `text` (a Rust file as rustfmt writes it): lines that are not
/// blank and not only a comment, outside items marked `#[cfg(test)]`.
fn code_lines(text: &str) -> usize {
    /// The line ranges of `#[cfg(test)]` items, at any depth.
    #[derive(Default)]
    struct TestItems(Vec<(usize, usize)>);
    impl<'ast> Visit<'ast> for TestItems {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            use syn::spanned::Spanned;
            let attrs = match item {
                syn::Item::Mod(m) => &m.attrs,
                syn::Item::Fn(f) => &f.attrs,
                syn::Item::Impl(i) => &i.attrs,
                syn::Item::Use(u) => &u.attrs,
                syn::Item::Struct(s) => &s.attrs,
                syn::Item::Const(c) => &c.attrs,
                syn::Item::Static(s) => &s.attrs,
                _ => return visit::visit_item(self, item),
            };
            let test = attrs.iter().any(|a| {
                a.path().is_ident("cfg")
                    && a.parse_args::<syn::Path>()
                        .is_ok_and(|p| p.is_ident("test"))
            });
            if test {
                let span = item.span();
                self.0.push((span.start().line, span.end().line));
            } else {
                visit::visit_item(self, item);
            }
        }
    }
    let mut tests = TestItems::default();
    if let Ok(file) = syn::parse_file(text) {
        tests.visit_file(&file);
    }
    text.lines()
        .enumerate()
        .filter(|(i, line)| {
            let line = line.trim();
            let in_test = tests.0.iter().any(|&(a, b)| (a..=b).contains(&(i + 1)));
            !line.is_empty() && !line.starts_with("//") && !in_test
        })
        .count()
}

/// Code lines over every workspace member's `src/` ([`code_lines`]; test modules'
/// files, `tests.rs` and files under a `tests/` folder, and loom models left out),
/// per member and in all: `cargo test --all-features --test architecture --
/// --ignored --nocapture code_lines_of_the_workspace`.
#[test]
#[ignore = "a count to read, not a check"]
fn code_lines_of_the_workspace() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut all = 0;
    for member in [
        ".",
        "macros",
        "cli",
        "exporters/prometheus",
        "exporters/otlp",
        "loom",
    ] {
        let mut lines = 0;
        for path in glob::glob(&format!("{root}/{member}/src/**/*.rs")).expect("a pattern") {
            let path = path.expect("a readable directory");
            let name = path.to_string_lossy().replace('\\', "/");
            if name.ends_with("/tests.rs")
                || name.contains("/tests/")
                || name.ends_with("/loom_model.rs")
            {
                continue;
            }
            lines += code_lines(&std::fs::read_to_string(&path).expect("a source file"));
        }
        println!("{member:<22} {lines:>7}");
        all += lines;
    }
    println!("{:<22} {all:>7}", "all");
}

#[test]
fn code_lines_leave_out_blanks_comments_and_test_items() {
    let text = "//! A module.\n\nuse a::b; // a use\n\n/// A fn.\nfn f() {\n    g();\n}\n\n\
                #[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
    assert_eq!(code_lines(text), 4);
}
