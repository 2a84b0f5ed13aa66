//! Runs the library's loom models (`latte::__private::loom_models`), as many at a time
//! as the machine has cores, each caught so that one failing does not hide the others.
//!
//! Arguments as libtest's: names to filter by (a model runs when its name contains one
//! of them, or equals one with `--exact`), `--list` to print the names as `name: test`
//! lines; other flags are ignored. Without `--cfg latte_loom` there is no model to run
//! and it says so.

#[cfg(not(latte_loom))]
fn main() {
    if !std::env::args().any(|arg| arg == "--list") {
        println!(
            "no loom models in this build: they are built with RUSTFLAGS=\"--cfg latte_loom\""
        );
    }
}

#[cfg(latte_loom)]
std::thread_local! {
    /// The panics of the model this thread runs, with their backtraces.
    static PANICS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A model and its name.
#[cfg(latte_loom)]
type Model = (&'static str, fn());

/// The models the arguments select, and whether only their names are wanted.
#[cfg(latte_loom)]
fn selected() -> (Vec<Model>, bool) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|arg| arg == name);
    let filters: Vec<&str> = args
        .iter()
        .filter(|arg| !arg.starts_with('-'))
        .map(String::as_str)
        .collect();
    let wanted = |name: &str| {
        filters.is_empty()
            || filters.iter().any(|f| {
                if flag("--exact") {
                    name == *f
                } else {
                    name.contains(f)
                }
            })
    };
    let models: Vec<Model> = latte::__private::loom_models()
        .into_iter()
        .filter(|(name, _)| wanted(name))
        .collect();
    if models.is_empty() && !flag("--list") {
        eprintln!("no loom model matches {filters:?}");
        std::process::exit(1);
    }
    (models, flag("--list"))
}

#[cfg(latte_loom)]
fn main() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    let (models, list) = selected();
    if list {
        for (name, _) in &models {
            println!("{name}: test");
        }
        return;
    }
    // Some models must fail (a variant of the protocol that loom has to break): their
    // panics are expected, so messages are kept per thread and printed only for a
    // model that fails.
    std::panic::set_hook(Box::new(|info| {
        let message = format!("{info}\n{}", std::backtrace::Backtrace::capture());
        PANICS.with_borrow_mut(|panics| panics.push(message));
    }));

    let began = Instant::now();
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    println!("running {} loom models, {workers} at a time", models.len());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(models.len()) {
            scope.spawn(|| {
                while let Some(&(name, model)) = models.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let start = Instant::now();
                    let passed = std::panic::catch_unwind(model).is_ok();
                    let panics = PANICS.take();
                    let verdict = if passed { "ok" } else { "FAILED" };
                    println!(
                        "model {name} ... {verdict} ({:.1} s)",
                        start.elapsed().as_secs_f64()
                    );
                    if !passed {
                        println!("{}", panics.join("\n"));
                        failed.lock().unwrap().push(name);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    println!(
        "\nloom models: {} passed, {} failed, in {:.1} s",
        models.len() - failed.len(),
        failed.len(),
        began.elapsed().as_secs_f64()
    );
    if !failed.is_empty() {
        println!("failed: {}", failed.join(", "));
        std::process::exit(1);
    }
}
