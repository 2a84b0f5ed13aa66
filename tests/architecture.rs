//! The shape of `src/`, checked like any other behaviour.
//!
//! latte's modules are laid out along the path a sample takes: the clock reads the
//! counter (knowing the platform it runs on), a per-thread ring records it, collection
//! gathers the rings into a capture, analysis turns a capture into a report, and the
//! agent drives it all from its own thread. This test reads the source files and keeps
//! that layout honest:
//!
//! * **Folders follow the data.** A top-level module is `src/X.rs` or the folder
//!   `src/X/`, each one has a row in `ALLOWED`, and no `#[path = ...]` attribute moves
//!   a module away from where its path says: the folder tree *is* the module map.
//! * **Every arrow points one way.** A module references only the modules its row in
//!   `ALLOWED` lists (further down the data flow, or the shared leaves), and no two
//!   modules depend on each other through any chain of imports (Tarjan's strongly
//!   connected components over the imports actually written).
//! * **`lib.rs` is the front door.** The crate root re-exports items for users.
//!   Internal code imports each item from the module that defines it, never as
//!   `crate::Item` (nor `latte::Item`: the crate is also `extern crate self as latte`).
//!   Going through the root would make every module depend on the root and the root on
//!   every module, hiding the real dependencies, and the cycles among them.
//! * **Small enough to read.** A file stays within 400 lines unless a leading
//!   `//! Length:` line says why it cannot; a function stays within 60 lines. Inline
//!   unit tests and loom models, at the end of a file, are exempt from the second.
//!
//! The checker is a scanner, not a parser, and uses only `std`: it blanks out comments
//! and the contents of string and char literals, then looks for paths that begin at
//! the crate root (`crate::`, `latte::`, `::latte::`, or a `super::` chain climbing
//! that far). That is enough for how this crate writes its paths. Every rule has a
//! self-test on a small in-memory tree at the end of this file.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::fs;
use std::path::Path;

/// The direction rule: each top-level module of `src/`, and the other top-level
/// modules it may reference. Anything not listed is a violation, and so is a
/// top-level module without a row.
///
/// Data flows down and to the right; nothing points back:
///
/// ```text
///     agent -> analyze -> collect -> record -> clock -> platform
///       |         |                    ^
///       v         v                    |
///    exporter -> report           integrations
///
///     macros: nothing (they expand to `$crate::__private` paths)
///     config, diagnostics, error: leaves, usable by all (error may use config)
/// ```
const ALLOWED: &[(&str, &[&str])] = &[
    (
        "agent",
        &[
            "exporter",
            "analyze",
            "report",
            "collect",
            "record",
            "clock",
            "platform",
            "config",
            "diagnostics",
            "error",
        ],
    ),
    (
        "analyze",
        &[
            "report",
            "collect",
            "record",
            "clock",
            "platform",
            "config",
            "diagnostics",
            "error",
        ],
    ),
    (
        "collect",
        &[
            "record",
            "clock",
            "platform",
            "config",
            "diagnostics",
            "error",
        ],
    ),
    (
        "record",
        &["clock", "platform", "config", "diagnostics", "error"],
    ),
    ("clock", &["platform", "config", "diagnostics", "error"]),
    ("platform", &["config", "diagnostics", "error"]),
    ("report", &["config", "diagnostics", "error"]),
    ("exporter", &["report", "config", "diagnostics", "error"]),
    (
        "integrations",
        &[
            "record",
            "clock",
            "platform",
            "config",
            "diagnostics",
            "error",
        ],
    ),
    ("macros", &[]),
    ("config", &[]),
    ("diagnostics", &[]),
    ("error", &["config"]),
];

/// Longest file, in lines, that needs no `//! Length:` reason.
const MAX_FILE_LINES: usize = 400;

/// Longest function, in lines from `fn` to its closing brace.
const MAX_FN_LINES: usize = 60;

/// The crate's sources.
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The command-line tool's sources (a consumer of the public API, outside `src/`).
const CLI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/cli/src");

#[test]
fn src_follows_the_architecture() {
    let files = read_sources(Path::new(SRC), "src");
    assert!(!files.is_empty(), "no .rs files under {SRC}");
    let violations = check(&files);
    assert!(
        violations.is_empty(),
        "{} architecture violation(s):\n{}\n\n\
         see docs/architecture.md for the module map and the direction rule",
        violations.len(),
        violations.join("\n"),
    );
}

/// The command-line tool keeps the length rules too (its imports are the library's
/// public API, which the direction rule does not concern).
#[test]
fn the_cli_is_small_enough_to_read() {
    let files = read_sources(Path::new(CLI), "cli/src");
    assert!(!files.is_empty(), "no .rs files under {CLI}");
    let mut found = Vec::new();
    let sources: Vec<Source> = files.iter().map(|(p, t)| Source::new(p, t)).collect();
    for source in &sources {
        check_lengths(source, &mut found);
    }
    let found: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Every `.rs` file under `src`, sorted, as (path from the package root, beginning
/// with `prefix`, and text).
fn read_sources(src: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                paths.push(path);
            }
        }
    }
    let mut files: Vec<(String, String)> = paths
        .into_iter()
        .map(|path| {
            let inner = path.strip_prefix(src).expect("walked from src");
            let segments: Vec<_> = inner.iter().map(|s| s.to_string_lossy()).collect();
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (format!("{prefix}/{}", segments.join("/")), text)
        })
        .collect();
    files.sort();
    files
}

/// All violations in `files`, given as (path from the crate root, text) pairs: those
/// with a place first, by file and line, then the import cycles.
fn check(files: &[(String, String)]) -> Vec<String> {
    let sources: Vec<Source> = files
        .iter()
        .map(|(path, text)| Source::new(path, text))
        .collect();

    // Top-level module -> its first file.
    let mut modules: BTreeMap<&str, &str> = BTreeMap::new();
    for source in &sources {
        if let Some(&name) = source.module.first() {
            modules.entry(name).or_insert(source.path);
        }
    }

    let mut found = Vec::new();
    for (&name, &path) in &modules {
        if allowed(name).is_none() {
            found.push(Violation::new(
                path,
                1,
                format!(
                    "module {name} is not in the architecture table: \
                     add it with its allowed imports"
                ),
            ));
        }
    }
    let mut imports: Imports = modules.keys().map(|&m| (m, BTreeMap::new())).collect();
    for source in &sources {
        check_references(source, &modules, &mut imports, &mut found);
        check_lengths(source, &mut found);
        for line in source.code.path_attributes() {
            found.push(Violation::new(
                source.path,
                line,
                "#[path = ...] attribute: move the file to where its module path says".to_string(),
            ));
        }
    }
    found.sort_by_key(|violation| (violation.path, violation.line));

    let mut report: Vec<String> = found.iter().map(ToString::to_string).collect();
    report.extend(cycles(&imports));
    report
}

/// The modules `module` may import, if it has a row in the table.
fn allowed(module: &str) -> Option<&'static [&'static str]> {
    ALLOWED
        .iter()
        .find(|(name, _)| *name == module)
        .map(|(_, allowed)| *allowed)
}

/// One violation with a place in a file.
struct Violation<'a> {
    path: &'a str,
    line: usize,
    message: String,
}

impl<'a> Violation<'a> {
    fn new(path: &'a str, line: usize, message: String) -> Violation<'a> {
        Violation {
            path,
            line,
            message,
        }
    }
}

impl fmt::Display for Violation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.message)
    }
}

/// Imports between top-level modules: importer -> imported -> first place it does so.
type Imports<'a> = BTreeMap<&'a str, BTreeMap<&'a str, (&'a str, usize)>>;

/// A source file, with its code blanked of comments and literals.
struct Source<'a> {
    path: &'a str,
    text: &'a str,
    /// Module path from the crate root: `src/record/ring.rs` and `src/record/ring/mod.rs`
    /// are `[record, ring]`, `src/lib.rs` is `[]`.
    module: Vec<&'a str>,
    code: Code,
}

impl<'a> Source<'a> {
    fn new(path: &'a str, text: &'a str) -> Source<'a> {
        let inner = path.strip_prefix("src/").unwrap_or(path);
        let inner = inner.strip_suffix(".rs").unwrap_or(inner);
        let mut module: Vec<&str> = inner.split('/').collect();
        if module == ["lib"] {
            module.clear();
        } else if module.len() > 1 && module.last() == Some(&"mod") {
            module.pop();
        }
        Source {
            path,
            text,
            module,
            code: Code::new(text),
        }
    }
}

/// Records the file's imports of other top-level modules, checks them against the
/// table, and reports the paths that go through the crate root. `lib.rs` is the root
/// itself and may reach everything.
fn check_references<'a>(
    source: &Source<'a>,
    modules: &BTreeMap<&'a str, &'a str>,
    imports: &mut Imports<'a>,
    found: &mut Vec<Violation<'a>>,
) {
    let Some(&own) = source.module.first() else {
        return;
    };
    for reference in source.code.root_references(source.module.len()) {
        let line = reference.line;
        if reference.name == "self" {
            continue; // `crate::{self, ...}`: the root as a whole, no item through it
        }
        let Some((&target, _)) = modules.get_key_value(reference.name.as_str()) else {
            let path = format!("{}{}", reference.prefix, reference.name);
            found.push(Violation::new(
                source.path,
                line,
                format!("{path} goes through the crate root; import it from its module"),
            ));
            continue;
        };
        if target == own {
            continue;
        }
        if let Some(targets) = imports.get_mut(own) {
            targets.entry(target).or_insert((source.path, line));
        }
        if let Some(allowed) = allowed(own)
            && !allowed.contains(&target)
        {
            let allowed = if allowed.is_empty() {
                "none".to_string()
            } else {
                allowed.join(", ")
            };
            found.push(Violation::new(
                source.path,
                line,
                format!("{own} may not import {target} (allowed: {allowed})"),
            ));
        }
    }
}

/// Long files without a reason, and long functions outside the tests.
fn check_lengths<'a>(source: &Source<'a>, found: &mut Vec<Violation<'a>>) {
    let lines = source.text.lines().count();
    if lines > MAX_FILE_LINES && !says_why_it_is_long(source.text) {
        found.push(Violation::new(
            source.path,
            1,
            format!(
                "file is {lines} lines (limit {MAX_FILE_LINES}): split it, \
                 or give the reason in a leading `//! Length:` line"
            ),
        ));
    }
    for function in source.code.functions() {
        if function.lines > MAX_FN_LINES {
            found.push(Violation::new(
                source.path,
                function.line,
                format!(
                    "fn {} is {} lines (limit {MAX_FN_LINES})",
                    function.name, function.lines
                ),
            ));
        }
    }
}

/// Whether the file's leading `//!` block has a `//! Length:` line with a reason.
fn says_why_it_is_long(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .take_while(|line| line.starts_with("//!"))
        .filter_map(|line| line.strip_prefix("//! Length:"))
        .any(|why| !why.trim().is_empty())
}

/// Every group of modules that import each other, through any chain, as one
/// of its shortest cycles with the place of each import in it.
fn cycles(imports: &Imports) -> Vec<String> {
    let graph: Graph = imports
        .iter()
        .map(|(&module, targets)| (module, targets.keys().copied().collect()))
        .collect();
    let mut cycles: Vec<String> = strongly_connected(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let cycle = shortest_cycle(&graph, &component);
            let places: Vec<String> = cycle
                .windows(2)
                .map(|pair| {
                    let (path, line) = imports[pair[0]][pair[1]];
                    format!("{} -> {} at {path}:{line}", pair[0], pair[1])
                })
                .collect();
            // A shortest cycle can leave out members of a bigger knot: name them all.
            let knot = if component.len() + 1 > cycle.len() {
                format!(" [all entangled: {}]", component.join(", "))
            } else {
                String::new()
            };
            format!(
                "cycle: {} ({}){knot}",
                cycle.join(" -> "),
                places.join(", ")
            )
        })
        .collect();
    cycles.sort();
    cycles
}

/// A directed graph of module names.
type Graph<'a> = BTreeMap<&'a str, BTreeSet<&'a str>>;

/// The strongly connected components of `graph` (Tarjan's algorithm), each sorted.
fn strongly_connected<'a>(graph: &Graph<'a>) -> Vec<Vec<&'a str>> {
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for &node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.components
}

/// The state of Tarjan's depth-first search.
struct Tarjan<'g, 'a> {
    graph: &'g Graph<'a>,
    /// Visiting order of each node seen.
    index: BTreeMap<&'a str, usize>,
    /// Lowest index reachable from each node through the nodes still on the stack.
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    components: Vec<Vec<&'a str>>,
}

impl<'a> Tarjan<'_, 'a> {
    fn visit(&mut self, node: &'a str) {
        let index = self.index.len();
        self.index.insert(node, index);
        self.low.insert(node, index);
        self.stack.push(node);
        self.on_stack.insert(node);
        let graph = self.graph;
        for &next in graph.get(node).into_iter().flatten() {
            let reach = if !self.index.contains_key(next) {
                self.visit(next);
                self.low[next]
            } else if self.on_stack.contains(next) {
                self.index[next]
            } else {
                continue;
            };
            let low = self.low[node].min(reach);
            self.low.insert(node, low);
        }
        if self.low[node] == index {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack.remove(member);
                component.push(member);
                if member == node {
                    break;
                }
            }
            component.sort_unstable();
            self.components.push(component);
        }
    }
}

/// A shortest cycle through the first module of a strongly connected `component`,
/// from that module back to it (breadth-first search inside the component).
fn shortest_cycle<'a>(graph: &Graph<'a>, component: &[&'a str]) -> Vec<&'a str> {
    let start = component[0];
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        let inside = graph
            .get(node)
            .into_iter()
            .flatten()
            .filter(|next| component.contains(next));
        for &next in inside {
            if next == start {
                let mut cycle = vec![start];
                let mut at = node;
                while at != start {
                    cycle.push(at);
                    at = came_from[at];
                }
                cycle.push(start);
                cycle.reverse();
                return cycle;
            }
            if !came_from.contains_key(next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    unreachable!("a strongly connected component has a cycle through each member")
}

/// A path that begins at the crate root, as found in the code.
struct RootReference {
    line: usize,
    /// How the path reaches the root: `crate::`, `latte::`, `::latte::`, `super::super::`.
    prefix: String,
    /// The segment after the root: an identifier, or `*`.
    name: String,
}

/// A function found in the code.
struct Function {
    name: String,
    /// Line of its `fn` keyword.
    line: usize,
    /// Lines from `fn` to its closing brace, inclusive.
    lines: usize,
}

/// A file's code: its text with comments and the contents of string and char
/// literals replaced by spaces, so that every remaining character is code, on the
/// line and column where it was.
struct Code {
    chars: Vec<char>,
    /// Position of the first character of each line.
    line_starts: Vec<usize>,
}

impl Code {
    fn new(text: &str) -> Code {
        let chars = blank_non_code(text);
        let line_starts = std::iter::once(0)
            .chain(
                chars
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c == '\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Code { chars, line_starts }
    }

    /// 1-based line of the character at `pos`.
    fn line(&self, pos: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= pos)
    }

    fn text(&self, start: usize, end: usize) -> String {
        self.chars[start..end].iter().collect()
    }

    fn is(&self, pos: usize, c: char) -> bool {
        self.chars.get(pos) == Some(&c)
    }

    /// Every identifier-like word (keywords and numbers too), as (start, end).
    fn words(&self) -> Vec<(usize, usize)> {
        let mut words = Vec::new();
        let mut pos = 0;
        while pos < self.chars.len() {
            if is_ident(self.chars[pos]) {
                let end = self.word_end(pos);
                words.push((pos, end));
                pos = end;
            } else {
                pos += 1;
            }
        }
        words
    }

    fn word_end(&self, pos: usize) -> usize {
        pos + self.chars[pos..]
            .iter()
            .take_while(|&&c| is_ident(c))
            .count()
    }

    /// The word starting at `pos` (after whitespace), if there is one, as (start, end).
    fn word_after(&self, pos: usize) -> Option<(usize, usize)> {
        let start = self.skip_space(pos);
        let first = *self.chars.get(start)?;
        (first.is_alphabetic() || first == '_').then(|| (start, self.word_end(start)))
    }

    fn skip_space(&self, pos: usize) -> usize {
        pos + self.chars[pos.min(self.chars.len())..]
            .iter()
            .take_while(|c| c.is_whitespace())
            .count()
    }

    /// If `::` follows `pos` (whitespace allowed), the position after it and after
    /// the whitespace that follows.
    fn after_separator(&self, pos: usize) -> Option<usize> {
        let sep = self.skip_space(pos);
        (self.is(sep, ':') && self.is(sep + 1, ':')).then(|| self.skip_space(sep + 2))
    }

    /// If `::` comes right before `pos` (whitespace allowed), the position of its
    /// first colon.
    fn separator_before(&self, pos: usize) -> Option<usize> {
        let end = self.last_non_space_before(pos)?;
        (end >= 1 && self.is(end, ':') && self.is(end - 1, ':')).then(|| end - 1)
    }

    fn last_non_space_before(&self, pos: usize) -> Option<usize> {
        (0..pos).rev().find(|&i| !self.chars[i].is_whitespace())
    }

    /// Position of the bracket closing the one opening at `open`, or the end.
    fn closing(&self, open: usize) -> usize {
        let (opening, closing) = match self.chars[open] {
            '(' => ('(', ')'),
            '[' => ('[', ']'),
            _ => ('{', '}'),
        };
        let mut depth = 0usize;
        for (pos, &c) in self.chars.iter().enumerate().skip(open) {
            if c == opening {
                depth += 1;
            } else if c == closing {
                depth -= 1;
                if depth == 0 {
                    return pos;
                }
            }
        }
        self.chars.len().saturating_sub(1)
    }

    /// Every path in the code that begins at the crate root, for a file whose module
    /// path is `depth` deep.
    fn root_references(&self, depth: usize) -> Vec<RootReference> {
        let inline_modules = self.inline_modules();
        let mut found = Vec::new();
        for (start, end) in self.words() {
            let depth = depth
                + inline_modules
                    .iter()
                    .filter(|&&(open, close)| open < start && start < close)
                    .count();
            let Some((prefix, after)) = self.root_prefix(start, end, depth) else {
                continue;
            };
            for (pos, name) in self.first_segments(after) {
                found.push(RootReference {
                    line: self.line(pos),
                    prefix: prefix.clone(),
                    name,
                });
            }
        }
        found
    }

    /// If the word at `start..end` begins a path at the crate root, how it is written
    /// and where the segment after the root begins. `depth` is the module depth there.
    fn root_prefix(&self, start: usize, end: usize, depth: usize) -> Option<(String, usize)> {
        if start > 0 && self.chars[start - 1] == '$' {
            return None; // `$crate::`: where a macro expands, not an import
        }
        let continues_a_path = self.separator_before(start);
        let after = self.after_separator(end)?;
        match self.text(start, end).as_str() {
            "crate" if continues_a_path.is_none() => Some(("crate::".to_string(), after)),
            "latte" => match continues_a_path {
                None => Some(("latte::".to_string(), after)),
                Some(sep) => {
                    let before = self.last_non_space_before(sep).map(|i| self.chars[i]);
                    let begins_path = !before.is_some_and(|c| is_ident(c) || "$>".contains(c));
                    begins_path.then(|| ("::latte::".to_string(), after))
                }
            },
            "super" if continues_a_path.is_none() => {
                let mut climbs = 1;
                let mut after = after;
                while let Some((start, end)) = self.word_after(after)
                    && self.text(start, end) == "super"
                    && let Some(next) = self.after_separator(end)
                {
                    climbs += 1;
                    after = next;
                }
                (depth > 0 && climbs >= depth).then(|| ("super::".repeat(climbs), after))
            }
            _ => None,
        }
    }

    /// The first segment after a root prefix ending at `pos`: one segment, or one per
    /// top-level entry of a brace group. Each as (position, name); a glob is `*`.
    fn first_segments(&self, pos: usize) -> Vec<(usize, String)> {
        if !self.is(pos, '{') {
            return self.segment(pos).into_iter().collect();
        }
        let close = self.closing(pos);
        let mut entries = vec![pos + 1];
        let mut depth = 0usize;
        for (i, &c) in self.chars.iter().enumerate().take(close).skip(pos + 1) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => entries.push(i + 1),
                _ => {}
            }
        }
        entries
            .into_iter()
            .filter_map(|entry| self.segment(entry))
            .collect()
    }

    fn segment(&self, pos: usize) -> Option<(usize, String)> {
        let start = self.skip_space(pos);
        if self.is(start, '*') {
            return Some((start, "*".to_string()));
        }
        self.word_after(start)
            .map(|(start, end)| (start, self.text(start, end)))
    }

    /// Brace spans (open, close) of modules declared inline: `mod name { ... }`.
    fn inline_modules(&self) -> Vec<(usize, usize)> {
        self.words()
            .into_iter()
            .filter(|&(start, end)| self.text(start, end) == "mod")
            .filter_map(|(_, end)| {
                let (_, name_end) = self.word_after(end)?;
                let open = self.skip_space(name_end);
                self.is(open, '{').then(|| (open, self.closing(open)))
            })
            .collect()
    }

    /// Every function with a body that starts before the tests: the first line
    /// beginning with a `#[cfg(` that mentions `test`.
    fn functions(&self) -> Vec<Function> {
        let code: String = self.chars.iter().collect();
        let tests = code
            .lines()
            .position(|line| {
                let line = line.trim_start();
                line.starts_with("#[cfg(") && line.contains("test")
            })
            .map_or(usize::MAX, |index| index + 1);
        let mut functions = Vec::new();
        for (start, end) in self.words() {
            let line = self.line(start);
            if line >= tests {
                break;
            }
            if self.text(start, end) != "fn" {
                continue;
            }
            let Some((name_start, name_end)) = self.word_after(end) else {
                continue; // a `fn(..)` pointer type
            };
            let Some(open) = self.body(name_end) else {
                continue; // a declaration without a body
            };
            functions.push(Function {
                name: self.text(name_start, name_end),
                line,
                lines: self.line(self.closing(open)) - line + 1,
            });
        }
        functions
    }

    /// The brace opening the body of a function whose signature continues at `pos`,
    /// or `None` if a `;` ends it first.
    fn body(&self, pos: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, &c) in self.chars.iter().enumerate().skip(pos) {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '{' if depth == 0 => return Some(i),
                ';' if depth == 0 => return None,
                _ => {}
            }
        }
        None
    }

    /// The line of each `path = ...` inside an attribute, `#[...]` or `#![...]`
    /// (also within `cfg_attr`).
    fn path_attributes(&self) -> Vec<usize> {
        let attributes: Vec<(usize, usize)> = (0..self.chars.len())
            .filter(|&pos| self.chars[pos] == '#')
            .filter_map(|pos| {
                let mut open = self.skip_space(pos + 1);
                if self.is(open, '!') {
                    open = self.skip_space(open + 1);
                }
                self.is(open, '[').then(|| (open, self.closing(open)))
            })
            .collect();
        self.words()
            .into_iter()
            .filter(|&(start, end)| {
                let assigned = self.skip_space(end);
                self.text(start, end) == "path"
                    && self.is(assigned, '=')
                    && !self.is(assigned + 1, '=')
                    && attributes
                        .iter()
                        .any(|&(open, close)| open < start && start < close)
            })
            .map(|(start, _)| self.line(start))
            .collect()
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with comments (line, doc and nested block comments) and the contents of
/// string, byte string, raw string and char literals replaced by spaces. Newlines are
/// kept, so every character stays on its line; lifetimes and labels stay as they are.
fn blank_non_code(text: &str) -> Vec<char> {
    let chars: Vec<char> = text.chars().collect();
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut out = Vec::with_capacity(chars.len());
    let mut pos = 0;
    while pos < chars.len() {
        let c = chars[pos];
        let next = chars.get(pos + 1).copied();
        // Where the comment, literal or token starting here ends (exclusive), and how
        // many of its characters to keep at its head and at its tail: the quotes, the
        // raw-string hashes, or all of a word.
        let (end, head, tail) = match (c, next) {
            ('/', Some('/')) => (line_comment_end(&chars, pos), 0, 0),
            ('/', Some('*')) => (block_comment_end(&chars, pos), 0, 0),
            ('"', _) => (string_end(&chars, pos + 1), 1, 1),
            ('\'', _) => match char_literal_end(&chars, pos) {
                Some(end) => (end, 1, 1),
                None => (pos + 1, 1, 0), // a lifetime or a label
            },
            _ if is_ident(c) => raw_string(&chars, pos).unwrap_or_else(|| {
                let end = pos + chars[pos..].iter().take_while(|&&c| is_ident(c)).count();
                (end, end - pos, 0)
            }),
            _ => (pos + 1, 1, 0),
        };
        for (offset, &c) in chars[pos..end].iter().enumerate() {
            let kept = offset < head || end - pos - offset <= tail;
            out.push(if kept { c } else { blank(c) });
        }
        pos = end;
    }
    out
}

fn line_comment_end(chars: &[char], start: usize) -> usize {
    chars[start..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |offset| start + offset)
}

fn block_comment_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0usize;
    let mut pos = start;
    while pos < chars.len() {
        match (chars[pos], chars.get(pos + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                pos += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                pos += 2;
                if depth == 0 {
                    return pos;
                }
            }
            _ => pos += 1,
        }
    }
    chars.len()
}

/// End (after the closing quote) of a string whose contents start at `pos`.
fn string_end(chars: &[char], mut pos: usize) -> usize {
    while pos < chars.len() {
        match chars[pos] {
            '\\' => pos += 2,
            '"' => return pos + 1,
            _ => pos += 1,
        }
    }
    chars.len()
}

/// End (after the closing quote) of the char literal opening at `start`, or `None`
/// if the quote begins a lifetime or a label (`'a`, `'static`, `'outer:`).
fn char_literal_end(chars: &[char], start: usize) -> Option<usize> {
    match chars.get(start + 1)? {
        '\\' => {
            // `'\n'`, `'\''`, `'\u{1F600}'`: the closing quote follows the escape.
            let from = start + 3;
            let offset = chars
                .get(from..)?
                .iter()
                .take(10)
                .position(|&c| c == '\'')?;
            Some(from + offset + 1)
        }
        '\'' | '\n' => None,
        _ => (chars.get(start + 2) == Some(&'\'')).then_some(start + 3),
    }
}

/// If a raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) starts at `start`: its end
/// (after the closing hashes), and the length of its opening and of its closing.
fn raw_string(chars: &[char], start: usize) -> Option<(usize, usize, usize)> {
    let mut pos = start;
    if matches!(chars[pos], 'b' | 'c') {
        pos += 1;
    }
    if chars.get(pos) != Some(&'r') {
        return None;
    }
    pos += 1;
    let hashes = chars[pos..].iter().take_while(|&&c| c == '#').count();
    pos += hashes;
    if chars.get(pos) != Some(&'"') {
        return None; // a raw identifier such as `r#type`, or just a word
    }
    let head = pos + 1 - start;
    let closes = |at: usize| {
        chars[at] == '"' && chars[at + 1..].iter().take_while(|&&c| c == '#').count() >= hashes
    };
    Some(match (pos + 1..chars.len()).find(|&at| closes(at)) {
        Some(at) => (at + 1 + hashes, head, hashes + 1),
        None => (chars.len(), head, 0),
    })
}

// ---------------------------------------------------------------------------------
// Self-tests: each rule on a small in-memory tree.
// ---------------------------------------------------------------------------------

/// The violations `check` finds in an in-memory tree of (path, text).
fn violations(tree: &[(&str, &str)]) -> Vec<String> {
    let files: Vec<(String, String)> = tree
        .iter()
        .map(|&(path, text)| (path.to_string(), text.to_string()))
        .collect();
    check(&files)
}

#[track_caller]
fn assert_clean(tree: &[(&str, &str)]) {
    let found = violations(tree);
    assert!(
        found.is_empty(),
        "expected no violations, got:\n{}",
        found.join("\n")
    );
}

/// What `record` importing `agent` is reported as.
const RECORD_MAY_NOT_IMPORT_AGENT: &str =
    "record may not import agent (allowed: clock, platform, config, diagnostics, error)";

/// A function of exactly `lines` lines (at least 2).
fn function(name: &str, lines: usize) -> String {
    format!("fn {name}() {{\n{}}}\n", "    step();\n".repeat(lines - 2))
}

#[test]
fn a_clean_tree_passes() {
    assert_clean(&[
        (
            "src/lib.rs",
            "mod agent;\nmod record;\npub use record::Id;\npub use crate::agent::Builder;\n\
             #[doc(hidden)]\npub mod __private {\n    pub use crate::record::Id;\n}\n",
        ),
        (
            "src/agent/mod.rs",
            "//! The agent.\nmod drain;\nuse crate::{\n    analyze::Report,\n    \
             record::{self, Id},\n};\npub struct Builder;\n",
        ),
        (
            "src/agent/drain.rs",
            "use super::Builder;\nuse crate::error::Error;\n\
             pub(crate) fn drain<'a>(ids: &'a [Id]) -> Result<(), Error> {\n    \
             let _ = super::super::record::ring::Ring;\n    Ok(())\n}\n",
        ),
        ("src/analyze/mod.rs", "pub struct Report;\n"),
        (
            "src/record/mod.rs",
            "pub(crate) mod ring;\nuse crate::clock::{self, Mode};\n\
             pub fn now() -> u64 { ::latte::clock::read() }\n",
        ),
        (
            "src/record/ring.rs",
            "use super::now;\npub(in crate::record) struct Ring;\n",
        ),
        ("src/clock.rs", "use crate::platform::Facts;\n"),
        ("src/platform/mod.rs", "pub struct Facts;\n"),
        ("src/config.rs", "pub struct Limits;\n"),
        (
            "src/error.rs",
            "use crate::config::Limits;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
    ]);
}

#[test]
fn a_cycle_is_reported() {
    let found = violations(&[
        ("src/agent/mod.rs", "use crate::report::Report;\n"),
        ("src/report/mod.rs", "\nuse crate::agent::Guard;\n"),
    ]);
    let places = "agent -> report at src/agent/mod.rs:1, report -> agent at src/report/mod.rs:2";
    let cycle = format!("cycle: agent -> report -> agent ({places})");
    assert!(found.contains(&cycle), "{cycle} not in {found:#?}");
}

#[test]
fn a_longer_cycle_is_reported_once() {
    let found = violations(&[
        ("src/clock.rs", "use crate::platform::Facts;\n"),
        ("src/platform.rs", "use crate::config::Limits;\n"),
        ("src/config.rs", "use crate::clock::now;\n"),
    ]);
    let cycles: Vec<_> = found.iter().filter(|v| v.starts_with("cycle: ")).collect();
    let places = "clock -> platform at src/clock.rs:1, \
                  platform -> config at src/platform.rs:1, config -> clock at src/config.rs:1";
    assert_eq!(
        cycles,
        [&format!(
            "cycle: clock -> platform -> config -> clock ({places})"
        )]
    );
}

#[test]
fn an_upward_import_is_reported() {
    assert_eq!(
        violations(&[
            ("src/record/mod.rs", "use crate::agent::Builder;\n"),
            ("src/agent/mod.rs", "")
        ]),
        [format!(
            "src/record/mod.rs:1: {RECORD_MAY_NOT_IMPORT_AGENT}"
        )],
    );
}

#[test]
fn an_upward_import_in_a_brace_group_over_two_lines_is_reported() {
    let text = "use crate::{clock::Tick,\n    agent::Builder};\n";
    assert_eq!(
        violations(&[
            ("src/record/mod.rs", text),
            ("src/agent/mod.rs", ""),
            ("src/clock.rs", ""),
        ]),
        [format!(
            "src/record/mod.rs:2: {RECORD_MAY_NOT_IMPORT_AGENT}"
        )],
    );
}

#[test]
fn an_upward_import_through_super_is_reported() {
    let text = "use super::Slot;\nuse super::super::agent::Builder;\n";
    assert_eq!(
        violations(&[("src/record/ring.rs", text), ("src/agent/mod.rs", "")]),
        [format!(
            "src/record/ring.rs:2: {RECORD_MAY_NOT_IMPORT_AGENT}"
        )],
    );
}

#[test]
fn super_in_an_inline_module_climbs_one_level_less() {
    let text = "use super::Report;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    \
                use super::super::Report;\n}\n";
    assert_eq!(
        violations(&[("src/error.rs", text)]),
        [
            "src/error.rs:1: super::Report goes through the crate root; import it from its module",
            "src/error.rs:5: super::super::Report goes through the crate root; \
             import it from its module",
        ],
    );
}

#[test]
fn imports_through_the_crate_root_are_reported() {
    let text = "use crate::Report;\nuse crate::{record::Id, Error};\n\
                fn go() { crate::start(&ID, m); crate::__private::stop(&ID) }\n";
    let lib = "pub use agent::Report;\npub mod __private { pub use crate::record::stop; }\n";
    let root = "goes through the crate root; import it from its module";
    assert_eq!(
        violations(&[
            ("src/lib.rs", lib),
            ("src/agent/drain.rs", text),
            ("src/record/mod.rs", ""),
        ]),
        [
            format!("src/agent/drain.rs:1: crate::Report {root}"),
            format!("src/agent/drain.rs:2: crate::Error {root}"),
            format!("src/agent/drain.rs:3: crate::start {root}"),
            format!("src/agent/drain.rs:3: crate::__private {root}"),
        ],
    );
}

#[test]
fn latte_paths_are_crate_paths() {
    let text = "fn f() {\n    let r = latte::Report::new();\n    ::latte::agent::init();\n    \
                other::latte::Thing::new();\n}\n";
    assert_eq!(
        violations(&[("src/clock/mod.rs", text), ("src/agent/mod.rs", "")]),
        [
            "src/clock/mod.rs:2: latte::Report goes through the crate root; \
             import it from its module",
            "src/clock/mod.rs:3: clock may not import agent \
             (allowed: platform, config, diagnostics, error)",
        ],
    );
}

#[test]
fn comments_and_strings_are_not_code() {
    let text = r###"//! See [`Report`](crate::Report).
/// Like [`start`](latte::start).
// use crate::Report;
/* crate::Report /* nested */ crate::Report */
fn f() {
    let quote = '"';
    let a = "crate::Report \" crate::Report";
    let b = r#"crate::Report "quoted" crate::Report"#;
    let c = b"crate::Report";
    let d = br##"crate::Report"# crate::Report"##;
}
"###;
    assert_clean(&[("src/record/mod.rs", text)]);
}

#[test]
fn dollar_crate_in_a_macro_is_not_an_import() {
    let text = "#[macro_export]\nmacro_rules! start {\n    ($id:expr) => {\n        \
                $crate::__private::start(&$crate::__private::Id::new($id))\n    };\n}\n";
    assert_clean(&[("src/macros.rs", text)]);
}

#[test]
fn a_long_file_needs_a_reason() {
    let body = "pub const X: u8 = 0;\n".repeat(400);
    let silent = format!("//! Limits.\n{body}");
    let reasoned = format!("//! Limits.\n//! Length: one table per platform.\n{body}");
    let late = format!("//! Limits.\n{body}//! Length: too late, not leading.\n");
    let fits = "pub const X: u8 = 0;\n".repeat(400);
    let long = "src/config.rs:1: file is 401 lines (limit 400): split it, \
                or give the reason in a leading `//! Length:` line";
    assert_eq!(violations(&[("src/config.rs", &silent)]), [long]);
    assert_clean(&[("src/config.rs", &reasoned)]);
    assert_clean(&[("src/config.rs", &fits)]);
    assert_eq!(
        violations(&[("src/config.rs", &late)]),
        [long.replace("401", "402")]
    );
}

#[test]
fn a_long_function_is_reported() {
    let text = format!(
        "//! Capture.\n{}{}",
        function("fits", 60),
        function("collect", 61)
    );
    assert_eq!(
        violations(&[("src/record/mod.rs", &text)]),
        ["src/record/mod.rs:62: fn collect is 61 lines (limit 60)"],
    );
}

#[test]
fn a_long_function_in_trailing_tests_is_not_reported() {
    let unit = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        function("a", 3),
        function("b", 99)
    );
    let loom = format!(
        "#[cfg(all(test, latte_loom))]\nmod loom_model {{\n{}}}\n",
        function("c", 80)
    );
    assert_clean(&[("src/record/mod.rs", &unit), ("src/record/ring.rs", &loom)]);
}

#[test]
fn a_path_attribute_is_reported() {
    let text = "#[cfg(target_arch = \"x86_64\")]\n#[path = \"x.rs\"]\nmod arch;\n\
                #[cfg_attr(unix, path = \"unix.rs\")]\nmod os;\nfn f(path: &str) { let path = 1; }\n";
    let found = "#[path = ...] attribute: move the file to where its module path says";
    assert_eq!(
        violations(&[("src/clock/mod.rs", text)]),
        [
            format!("src/clock/mod.rs:2: {found}"),
            format!("src/clock/mod.rs:4: {found}"),
        ],
    );
}

#[test]
fn a_module_missing_from_the_table_is_reported() {
    assert_eq!(
        violations(&[("src/telemetry/mod.rs", ""), ("src/telemetry/sink.rs", "")]),
        [
            "src/telemetry/mod.rs:1: module telemetry is not in the architecture table: \
             add it with its allowed imports"
        ],
    );
}

#[test]
fn char_literals_and_lifetimes_do_not_fool_brace_counting() {
    // Counted as braces, the `'{'`s would leave these functions open to the end of
    // the file, 60 lines of filler later.
    let tricky = r#"fn open() -> char { '{' }
fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.len() > b.len() { a } else { b }
}
fn escapes() -> [char; 4] { ['\'', '"', '\u{7B}', b'{' as char] }
fn label() { 'outer: loop { break 'outer; } }
fn text() -> &'static str { "{" }
"#;
    let filler = function("filler", 60);
    assert_clean(&[("src/record/mod.rs", &format!("{tricky}{filler}"))]);

    // Counted as a brace, the `'}'` would close this long function on its second line.
    let long = format!(
        "fn close() -> char {{\n    let c = '}}';\n{}    c\n}}\n",
        "    step();\n".repeat(58)
    );
    assert_eq!(
        violations(&[("src/record/mod.rs", &long)]),
        ["src/record/mod.rs:1: fn close is 62 lines (limit 60)"],
    );
}

#[test]
fn the_table_points_one_way() {
    let graph: Graph = ALLOWED
        .iter()
        .map(|&(module, allowed)| (module, allowed.iter().copied().collect()))
        .collect();
    for (module, allowed) in &graph {
        assert!(!allowed.contains(module), "{module} lists itself");
        for target in allowed {
            assert!(
                graph.contains_key(target),
                "{module} allows unknown {target}"
            );
        }
    }
    let components = strongly_connected(&graph);
    assert!(components.iter().all(|c| c.len() == 1), "{components:?}");
}
