use super::*;
use latte::report::{Row, RowKind, SelfTime, Summary};

/// A node of `id` under `parent` with `total` ns, `self_total` of it its own.
fn node(id: &str, parent: Option<usize>, depth: u32, total: f64, self_total: f64) -> TreeNode {
    TreeNode {
        allocs: None,
        parent,
        depth,
        row: Row {
            component: id.into(),
            stats: Summary {
                samples: 10,
                seen: 10,
                total,
                ..Summary::default()
            },
            ..Row::default()
        },
        self_time: Some(SelfTime {
            calls: 10,
            total: self_total,
            mean: self_total / 10.0,
        }),
        account: None,
        of_parent: None,
        of_root: 1.0,
    }
}

/// frame (1000) > a (600) > b (450), frame > c (300); a second root `idle` (250).
fn known() -> Vec<TreeNode> {
    vec![
        node("frame", None, 0, 1_000.0, 100.0),
        node("a", Some(0), 1, 600.0, 150.0),
        node("b", Some(1), 2, 450.0, 450.0),
        node("c", Some(0), 1, 300.0, 300.0),
        node("idle", None, 0, 250.0, 250.0),
    ]
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.01
}

#[test]
fn widths_are_the_shares_of_the_roots_time() {
    let cells = layout(&known(), 1_000.0);
    let got: Vec<(usize, f64, f64, u32)> = cells
        .iter()
        .map(|c| (c.node, c.x, c.width, c.depth))
        .collect();
    // The roots share 1250: frame 800 px, idle 200 px beside it.
    let want = [
        (0, 0.0, 800.0, 0),
        (1, 0.0, 480.0, 1),
        (2, 0.0, 360.0, 2),
        (3, 480.0, 240.0, 1),
        (4, 800.0, 200.0, 0),
    ];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && near(g.1, w.1) && near(g.2, w.2) && g.3 == w.3,
            "{got:?}"
        );
    }
}

#[test]
fn children_stay_inside_their_parents_span() {
    let mut tree = known();
    // Children adding up to more than their parent share its span in proportion.
    tree[3].row.stats.total = 700.0;
    let cells = layout(&tree, 1_000.0);
    for cell in &cells {
        if let Some(p) = tree[cell.node].parent {
            let parent = cells.iter().find(|c| c.node == p).unwrap();
            assert!(cell.x >= parent.x - 0.01, "{cell:?} in {parent:?}");
            assert!(cell.x + cell.width <= parent.x + parent.width + 0.01);
            assert_eq!(cell.depth, parent.depth + 1);
        }
    }
    let (a, c) = (&cells[1], &cells[3]);
    assert!(near(a.width, 800.0 * 600.0 / 1_300.0) && near(c.width, 800.0 * 700.0 / 1_300.0));
}

#[test]
fn pulses_values_and_empty_nodes_are_not_drawn() {
    let mut tree = known();
    tree[4].row.kind = RowKind::Pulse;
    tree[3].row.stats.total = 0.0;
    let nodes: Vec<usize> = layout(&tree, 1_000.0).iter().map(|c| c.node).collect();
    assert_eq!(nodes, [0, 1, 2]);
    // The frame alone is the root row now.
    assert!(near(layout(&tree, 1_000.0)[0].width, 1_000.0));
    assert_eq!(svg(&[], "ns"), None);
}

#[test]
fn titles_give_the_full_path_and_the_figures() {
    let tree = known();
    let svg = svg(&tree, "ns").unwrap();
    // One rectangle per node (beside the two of the striped pattern's definition).
    assert_eq!(svg.matches("<g><rect").count(), 5);
    assert_eq!(svg.matches("<title>").count(), 5);
    assert!(svg.contains("<title>frame &gt; a &gt; b\ntotal 450.0 ns, self 450.0 ns, 10 calls"));
    // A node with an account names latte's work inside it and what is not attributed.
    let mut tree = tree;
    tree[0].account = Some(latte::report::Account {
        total: 1_000,
        own: 80,
        children: 900,
        inside: 15,
        not_attributed: 5,
    });
    let svg = super::svg(&tree, "ns").unwrap();
    assert!(
        svg.contains(
            "total 1.000 us, self 100.0 ns, latte inside 15.00 ns, not attributed 5.000 ns"
        ),
        "{svg}"
    );
    // With the counting allocator: allocations per call, inclusive and the node's own.
    tree[0].allocs = Some(latte::alloc::ScopeAllocs::new(
        10,
        latte::alloc::Allocs::new(5, 400, 5, 400),
        latte::alloc::Allocs::new(30, 3_000, 30, 3_000),
    ));
    let svg = super::svg(&tree, "ns").unwrap();
    assert!(
        svg.contains("10 calls\n3 allocs, 300 B per call (0.5 allocs, 40 B in itself)"),
        "{svg}"
    );
    // ... and draws both, below the node at the right end of its span.
    assert_eq!(svg.matches("class=\"latte\"").count(), 1);
    assert_eq!(svg.matches("class=\"unplaced\"").count(), 1);
    assert_eq!(TreeNode::path(&tree, 2), ["frame", "a", "b"]);
    // Rows by depth.
    assert!(svg.contains(&format!("y=\"{}\"", 2.0 * ROW)));
    assert!(svg.contains(&format!("height=\"{}\"", 3.0 * ROW)));
}

#[test]
fn ids_are_escaped() {
    let mut tree = known();
    tree[1].row.component = "<a&\"b'>".into();
    let svg = svg(&tree, "ns").unwrap();
    assert!(!svg.contains("<a&"), "{svg}");
    assert!(svg.contains("&lt;a&amp;&quot;b&#x27;&gt;"), "{svg}");
}

#[test]
fn labels_fit_or_are_elided() {
    assert_eq!(
        label("Physics", Some(0.419), 200.0).as_deref(),
        Some("Physics 41.9%")
    );
    assert_eq!(
        label("Physics", Some(0.419), 80.0).as_deref(),
        Some("Physics")
    );
    assert_eq!(label("Physics", None, 200.0).as_deref(), Some("Physics"));
    assert_eq!(
        label("Physics_Collide", None, 60.0).as_deref(),
        Some("Physi…")
    );
    assert_eq!(label("Physics", None, 20.0), None);
    assert_eq!(colour("Physics"), colour("Physics"));
    assert_ne!(colour("Physics"), colour("Render"));
}
