//! `html` of a component below one counter step: most of its samples are 0, which a
//! log axis cannot place. The histogram draws them in its left end bin, so its tallest
//! bar and the table's `below the axis` count say the same share.

use crate::cli_support::{self, dir, write_report};
use crate::tool;

/// The numbers in `attr="..."` after each `key` in `text`.
fn attrs<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.match_indices(key)
        .map(|(at, _)| {
            let rest = &text[at + key.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

/// The share the tallest bar of the histogram's path `d` stands for, read against the
/// share axis's labels (`stick` texts at their grid line's y plus 4 px).
fn tallest_share(svg: &str) -> f64 {
    let d = attrs(svg, "class=\"hist\" d=\"")[0];
    // The path's commands (`M70,250`, `V120.5`, `H75.2`), each a letter and its numbers.
    let commands: Vec<(char, &str)> = d
        .match_indices(['M', 'V', 'H'])
        .map(|(at, letter)| {
            let rest = &d[at + 1..];
            let end = rest.find(['M', 'V', 'H']).unwrap_or(rest.len());
            (letter.chars().next().unwrap(), &rest[..end])
        })
        .collect();
    let bottom: f64 = commands[0].1.split(',').nth(1).unwrap().parse().unwrap();
    let top = commands
        .iter()
        .filter(|(letter, _)| *letter == 'V')
        .map(|(_, y)| y.parse::<f64>().unwrap())
        .fold(f64::INFINITY, f64::min);
    // The highest share label: its text and its y.
    let (label_y, label) = svg
        .match_indices("<text class=\"stick\"")
        .map(|(at, _)| {
            let text = &svg[at..];
            let y: f64 = attrs(text, " y=\"")[0].parse().unwrap();
            let body = &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()];
            (
                y - 4.0,
                body.trim_end_matches('%').parse::<f64>().unwrap() / 100.0,
            )
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    (bottom - top) / (bottom - label_y) * label
}

#[test]
fn a_component_below_one_counter_step_draws_its_zeros_as_the_table_counts_them() {
    let values = [(0, 7_000), (1, 1_500), (2, 1_000), (3, 500)];
    let report = cli_support::report(vec![cli_support::row("substep", &values)]);
    let d = dir("substep");
    let file = write_report(&d.join("substep.json"), &report);
    let page = d.join("page.html");
    tool()
        .arg("html")
        .arg(&file)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    let figure = &html[html.find("data-component=\"substep\"").unwrap()..];
    let svg = &figure[..figure.find("</svg>").unwrap()];
    // The table and the triangle count the zeros below the axis.
    let below: u64 = attrs(svg, "data-count=\"")[0].parse().unwrap();
    assert_eq!(below, 7_000, "{svg}");
    assert!(svg.contains("7000 sample(s) below the axis"), "{svg}");
    assert!(
        figure.contains("<td>10000</td>") && figure.contains("<td>7000</td><td>0</td></tr>"),
        "samples 10000, 7000 below the axis, 0 above: {figure}"
    );
    // The tallest bar is their share: 70% (a tenth of a pixel of rounding in 170 px).
    let drawn = tallest_share(svg);
    assert!(
        (drawn - 0.7).abs() < 0.005,
        "the tallest bar is {drawn}, the table says 7000 of 10000: {svg}"
    );
}
