//! The stack's layout: positions, slots, and the node and children's words.

use super::*;

fn stack_of<'a>(words: &'a [Word], scopes: &[u64]) -> Stack<'a> {
    let s = Stack::over(words);
    for (p, &f) in scopes.iter().enumerate() {
        s.set(p, scope(f));
    }
    s
}

fn scope(f: u64) -> StackScope {
    StackScope {
        tag: f,
        ticks: f * 10,
        node: f * 100,
        kids: f * 1000,
    }
}

#[test]
fn positions_wrap_onto_slots() {
    let w = words(4);
    let s = stack_of(&w, &[1, 2, 3, 4]);
    s.set(5, scope(6)); // position 5 is slot 1
    assert_eq!((s.id(1), s.id(5), s.scope(9)), (6, 6, scope(6)));
    // Nodes and children's ticks are one slot up: the root's below position 0.
    assert_eq!(
        (s.parent_node(0), s.parent_node(1), s.parent_node(6)),
        (0, 100, 600)
    );
    assert_eq!(s.parent_kids(2).get(), 6000);
    s.clear(9);
    assert_eq!(s.id(1), 0);
}

#[test]
fn remove_shifts_the_scopes_above_down() {
    let w = words(4);
    let s = stack_of(&w, &[1, 2, 3, 4]);
    s.remove(1, 4); // close position 1 of 0..4
    assert_eq!((0..4).map(|p| s.id(p)).collect::<Vec<_>>(), [1, 3, 4, 0]);
}

#[test]
fn remove_below_a_full_window_keeps_every_held_scope() {
    // len 4, positions 4..8 held (floor 4), position 3 given up: forget it.
    let w = words(4);
    let s = Stack::over(&w);
    for p in 4..8 {
        s.set(p, scope(p as u64));
    }
    s.remove(3, 8);
    // Now positions 3..7 hold what 4..8 held.
    assert_eq!((3..7).map(|p| s.id(p)).collect::<Vec<_>>(), [4, 5, 6, 7]);
}
