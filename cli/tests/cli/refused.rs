//! Readers refuse what no latte writes: `show`, `html` and `diff` alike, with one
//! line naming the file and the field, exit status 2, never a panic.

use crate::cli_support::{self, COMPONENTS, dir, write, write_report};
use crate::tool;
use std::path::{Path, PathBuf};

/// A report as latte writes it: two components, one under the other in the tree.
fn sound() -> latte::Report {
    let rows: Vec<latte::report::Row> = COMPONENTS[..2]
        .iter()
        .enumerate()
        .map(|(i, c)| cli_support::row(c.name, &cli_support::histogram(c, 7 + i as u64)))
        .collect();
    let mut report = cli_support::report(rows.clone());
    report.tree = vec![
        crate::tree_node(None, 0, rows[0].clone()),
        crate::tree_node(Some(0), 1, rows[1].clone()),
    ];
    report
}

/// Writes `report` as JSON after `edit` changed the JSON.
fn edited(path: &Path, report: &latte::Report, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let mut json: serde_json::Value =
        serde_json::from_str(&report.to_json(latte::report::JsonStyle::Compact)).unwrap();
    edit(&mut json);
    std::fs::write(path, json.to_string()).unwrap();
    path.to_path_buf()
}

/// Each broken report, with the field its error names.
fn broken(d: &Path) -> Vec<(PathBuf, &'static str)> {
    let garbage = "HISTFAAAgarbage";
    let mut far_parent = sound();
    far_parent.tree[1].parent = Some(999);
    let mut depth = sound();
    depth.tree[1].depth = 3;
    vec![
        (
            edited(&d.join("flat.json"), &sound(), |j| {
                j["all_threads"][1]["histogram"] = garbage.into();
            }),
            "`all_threads[1].histogram`: a histogram that is not base64",
        ),
        (
            edited(&d.join("node.json"), &sound(), |j| {
                j["tree"][1]["row"]["histogram"] = garbage.into();
            }),
            "`tree[1].row.histogram`",
        ),
        (
            edited(&d.join("block.json"), &sound(), |j| {
                j["series"]["components"][0]["blocks"][0] = garbage.into();
            }),
            "`series.components[0].blocks[0]`",
        ),
        (
            write_report(&d.join("parent.json"), &far_parent),
            "`tree[1].parent` is 999",
        ),
        (
            write_report(&d.join("depth.json"), &depth),
            "`tree[1].depth` is 3",
        ),
        (
            edited(&d.join("unversioned.json"), &sound(), |j| {
                j.as_object_mut().unwrap().remove("format_version");
            }),
            "report without `format_version` (format 1): no release of latte wrote it",
        ),
        (
            edited(&d.join("nameless.json"), &sound(), |j| {
                j["all_threads"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("component");
            }),
            "missing field `component`",
        ),
    ]
}

/// `subcommand` on `file` (for `diff`, after a sound report; for `html`, to a page in
/// `d`): exit status 2, one line naming the file and `field`, no panic.
fn refused(d: &Path, subcommand: &str, file: &Path, field: &str) {
    let mut cmd = tool();
    cmd.arg(subcommand);
    match subcommand {
        "diff" => cmd.arg(write(&d.join("good.json"), &COMPONENTS[..2], 1.0, 1)),
        "html" => cmd.arg("-o").arg(d.join("page.html")),
        _ => &mut cmd,
    };
    let out = cmd.arg(file).assert().code(2).get_output().clone();
    let text = String::from_utf8(out.stderr).unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        text.contains(&format!("{name}: ")) && text.contains(field),
        "{subcommand} {name}: {text}"
    );
    assert_eq!(text.lines().count(), 1, "{subcommand} {name}: {text}");
    assert!(!text.contains("panicked"), "{subcommand} {name}: {text}");
}

#[test]
fn show_html_and_diff_refuse_what_no_latte_writes() {
    let d = dir("refused");
    // The sound report reads: what is refused below is each edit's doing.
    let sound = write_report(&d.join("sound.json"), &sound());
    tool().arg("show").arg(&sound).assert().code(0);
    let page = d.join("sound.html");
    tool()
        .arg("html")
        .arg("-o")
        .arg(&page)
        .arg(&sound)
        .assert()
        .code(0);
    for (file, field) in broken(&d) {
        for subcommand in ["show", "html", "diff"] {
            refused(&d, subcommand, &file, field);
        }
    }
}

/// The reports of formats 1 and 3 in `tests/data/` (real reports of development
/// builds, before any release) are refused by every subcommand, saying why.
#[test]
fn reports_of_formats_no_release_wrote_are_refused_saying_so() {
    let d = dir("formats_1_and_3");
    for (fixture, said) in [
        (
            "report-format-1.json",
            "a summary without it is format 1's, which no release of latte wrote",
        ),
        (
            "report-format-3.json",
            "report format version 3: no release of latte wrote it; this latte reads \
             versions 4 to 8",
        ),
    ] {
        let old = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data")
            .join(fixture);
        for subcommand in ["show", "html", "diff"] {
            refused(&d, subcommand, &old, said);
        }
    }
}
