//! Parsing the arguments of `#[timed(...)]`.
//!
//! The grammar is a comma-separated list of `key = value`, in any order, each key at
//! most once:
//!
//! ```text
//! name  = "literal" | CONST  the component id (default: the function's name)
//! mode  = Fast | Mid | Hard  both ends (conflicts with `start` and `stop`)
//! start = Fast | Mid | Hard  the Start read (default Fast)
//! stop  = Fast | Mid | Hard  the Stop read (default Fast)
//! ```
//!
//! Syntax errors stop the parse; every semantic error (unknown or duplicate key, bad
//! value, conflict) is collected, so one build reports all of them, each spanned on
//! the offending tokens.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprLit, ExprPath, Ident, Lit, LitStr, Token};

/// What every error about an argument reminds the user of.
const ACCEPTED: &str = "expected `name = \"...\"` (or a constant), `mode = Fast|Mid|Hard`, \
                        `start = Fast|Mid|Hard` or `stop = Fast|Mid|Hard`";

/// The arguments of one `#[timed(...)]`, validated.
pub(crate) struct Args {
    /// The component id given with `name = ...`, if any.
    pub(crate) name: Option<Name>,
    /// Mode of the Start read.
    pub(crate) start: Mode,
    /// Mode of the Stop read.
    pub(crate) stop: Mode,
}

/// The value of `name = ...`.
// One per attribute, made once at compile time: its size does not matter. (The
// workspace's tests turn on proc-macro2's span locations, which makes `Expr` large
// enough for clippy to ask for a `Box` in the workspace build.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Name {
    /// A string literal, checked here.
    Literal(LitStr),
    /// Any other expression: a `&'static str` constant (a path, `concat!(...)`, a
    /// `const fn` call), which the compiler checks in a `const` of the expansion.
    Constant(Expr),
}

/// A timer mode, mirroring `latte::Mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `RDTSC`.
    #[default]
    Fast,
    /// `RDTSCP`.
    Mid,
    /// `LFENCE; RDTSCP`.
    Hard,
}

impl Mode {
    /// The variant's name in `latte::__private::Mode`.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Mode::Fast => "Fast",
            Mode::Mid => "Mid",
            Mode::Hard => "Hard",
        }
    }

    fn from_name(name: &str) -> Option<Mode> {
        match name {
            "Fast" => Some(Mode::Fast),
            "Mid" => Some(Mode::Mid),
            "Hard" => Some(Mode::Hard),
            _ => None,
        }
    }
}

/// The keys `#[timed]` accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Name,
    Mode,
    Start,
    Stop,
}

impl Key {
    fn from_ident(ident: &Ident) -> Option<Key> {
        match ident.unraw().to_string().as_str() {
            "name" => Some(Key::Name),
            "mode" => Some(Key::Mode),
            "start" => Some(Key::Start),
            "stop" => Some(Key::Stop),
            _ => None,
        }
    }

    /// How a value of this key is written, for error messages.
    fn usage(self) -> &'static str {
        match self {
            Key::Name => "`name = \"...\"` (a string literal) or `name = SOME_CONST`",
            Key::Mode => "`mode = Fast`, `mode = Mid` or `mode = Hard`",
            Key::Start => "`start = Fast`, `start = Mid` or `start = Hard`",
            Key::Stop => "`stop = Fast`, `stop = Mid` or `stop = Hard`",
        }
    }
}

/// One `key = value` as written.
struct RawArg {
    key: Ident,
    value: Expr,
}

/// Parses and validates the attribute's arguments (the tokens inside the parentheses).
pub(crate) fn parse(args: TokenStream) -> syn::Result<Args> {
    let raw = parse_raw.parse2(args)?;
    validate(raw)
}

/// The syntax: `key = expr`, comma-separated, optional trailing comma.
fn parse_raw(input: ParseStream) -> syn::Result<Vec<RawArg>> {
    let mut args = Vec::new();
    while !input.is_empty() {
        // Any identifier, keywords included, so `type = ...` is reported as an unknown
        // key rather than as a syntax error.
        let key = input
            .call(Ident::parse_any)
            .map_err(|e| syn::Error::new(e.span(), format!("expected an argument: {ACCEPTED}")))?;
        if !input.peek(Token![=]) {
            let message = match Key::from_ident(&key) {
                Some(k) => format!("`{key}` needs a value: {}", k.usage()),
                None => format!("unknown argument `{key}` for #[timed]: {ACCEPTED}"),
            };
            return Err(syn::Error::new(key.span(), message));
        }
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        args.push(RawArg { key, value });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(args)
}

/// Collects every error into one, so all of them are reported at once.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }
}

fn validate(raw: Vec<RawArg>) -> syn::Result<Args> {
    let mut errors = Errors::default();
    let mut name: Option<Name> = None;
    // The key each end was set by, to report conflicts and duplicates.
    let mut seen: Vec<(Key, Ident)> = Vec::new();
    let (mut start, mut stop) = (None, None);

    for RawArg { key: ident, value } in raw {
        let Some(key) = Key::from_ident(&ident) else {
            errors.spanned(
                &ident,
                format_args!("unknown argument `{ident}` for #[timed]: {ACCEPTED}"),
            );
            continue;
        };
        if !admit(key, ident, &mut seen, &mut errors) {
            continue;
        }

        match key {
            Key::Name => match name_value(value) {
                Ok(lit) => name = Some(lit),
                Err(e) => errors.push(e),
            },
            Key::Mode | Key::Start | Key::Stop => match mode(&value, key) {
                Ok(m) => {
                    if key != Key::Stop {
                        start = Some(m);
                    }
                    if key != Key::Start {
                        stop = Some(m);
                    }
                }
                Err(e) => errors.push(e),
            },
        }
    }

    match errors.0 {
        Some(e) => Err(e),
        None => Ok(Args {
            name,
            start: start.unwrap_or_default(),
            stop: stop.unwrap_or_default(),
        }),
    }
}

/// Whether an argument `key` may follow the keys already `seen`: not a second time, and
/// not `mode` together with `start` or `stop`. A conflicting key is remembered too, so
/// the conflict is reported once.
fn admit(key: Key, ident: Ident, seen: &mut Vec<(Key, Ident)>, errors: &mut Errors) -> bool {
    if seen.iter().any(|(k, _)| *k == key) {
        errors.spanned(
            &ident,
            format_args!("duplicate argument `{ident}`: each argument may be given at most once"),
        );
        return false;
    }
    let conflict = match key {
        Key::Mode => seen
            .iter()
            .find(|(k, _)| matches!(k, Key::Start | Key::Stop)),
        Key::Start | Key::Stop => seen.iter().find(|(k, _)| *k == Key::Mode),
        Key::Name => None,
    };
    if let Some((_, other)) = conflict {
        errors.spanned(
            &ident,
            format_args!(
                "`{ident}` conflicts with `{other}`: use `mode = ...` for both ends, \
                 or `start = ...` and/or `stop = ...` for each end, not both"
            ),
        );
    }
    let admitted = conflict.is_none();
    seen.push((key, ident));
    admitted
}

/// `name = ...`: a non-empty, unsuffixed string literal, or an expression the compiler
/// must find to be a `&'static str` constant. Other literals are refused here.
fn name_value(value: Expr) -> syn::Result<Name> {
    let lit = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit),
            attrs,
        }) if attrs.is_empty() => lit,
        Expr::Lit(_) => {
            return Err(syn::Error::new_spanned(
                &value,
                format!(
                    "`name` must be a `&'static str` known at compile time: a string literal, \
                     e.g. `name = \"process_order\"`, or a constant; found `{}`",
                    value.to_token_stream()
                ),
            ));
        }
        other => return Ok(Name::Constant(other)),
    };
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new_spanned(
            lit,
            "the `name` literal cannot have a suffix",
        ));
    }
    if lit.value().is_empty() {
        return Err(syn::Error::new_spanned(lit, "`name` cannot be empty"));
    }
    Ok(Name::Literal(lit))
}

/// `mode`, `start` or `stop` = one of the bare identifiers `Fast`, `Mid`, `Hard`.
fn mode(value: &Expr, key: Key) -> syn::Result<Mode> {
    if let Expr::Path(ExprPath {
        attrs,
        qself: None,
        path,
    }) = value
        && attrs.is_empty()
        && let Some(ident) = path.get_ident()
    {
        return Mode::from_name(&ident.to_string()).ok_or_else(|| {
            syn::Error::new(
                ident.span(),
                format!("unknown timer mode `{ident}`: expected `Fast`, `Mid` or `Hard`"),
            )
        });
    }
    Err(syn::Error::new_spanned(
        value,
        format!(
            "expected a timer mode, as in {}; found `{}`",
            key.usage(),
            value.to_token_stream()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn ok(tokens: TokenStream) -> Args {
        match parse(tokens) {
            Ok(args) => args,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err(tokens: TokenStream) -> Vec<String> {
        match parse(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn defaults() {
        let args = ok(quote!());
        assert!(args.name.is_none());
        assert_eq!((args.start, args.stop), (Mode::Fast, Mode::Fast));
    }

    #[test]
    fn every_key_any_order_trailing_comma() {
        let args = ok(quote!(stop = Hard, name = "n", start = Mid,));
        assert!(matches!(args.name, Some(Name::Literal(lit)) if lit.value() == "n"));
        assert_eq!((args.start, args.stop), (Mode::Mid, Mode::Hard));

        let args = ok(quote!(mode = Mid));
        assert_eq!((args.start, args.stop), (Mode::Mid, Mode::Mid));

        let args = ok(quote!(start = Hard));
        assert_eq!((args.start, args.stop), (Mode::Hard, Mode::Fast));

        let args = ok(quote!(r#name = r"raw"));
        assert!(matches!(args.name, Some(Name::Literal(lit)) if lit.value() == "raw"));
    }

    #[test]
    fn a_name_that_is_not_a_literal_is_left_to_the_compiler() {
        for tokens in [
            quote!(name = ORDER),
            quote!(name = ids::ORDER),
            quote!(name = concat!("a", "b")),
            quote!(name = order),
        ] {
            let args = ok(tokens.clone());
            assert!(matches!(args.name, Some(Name::Constant(_))), "{tokens}");
        }
    }

    #[test]
    fn semantic_errors_are_all_reported() {
        let errors = err(quote!(
            bogus = 1,
            name = 3,
            mode = Slow,
            name = "x",
            start = Mid,
            stop = Mode::Fast
        ));
        assert_eq!(errors.len(), 6, "{errors:#?}");
        assert!(errors[0].starts_with("unknown argument `bogus`"));
        assert!(errors[1].starts_with("`name` must be a `&'static str` known at compile time"));
        assert!(errors[2].starts_with("unknown timer mode `Slow`"));
        assert!(errors[3].starts_with("duplicate argument `name`"));
        assert!(errors[4].starts_with("`start` conflicts with `mode`"));
        assert!(errors[5].starts_with("`stop` conflicts with `mode`"));
    }

    #[test]
    fn bad_values() {
        assert!(err(quote!(mode = Mode::Fast))[0].starts_with("expected a timer mode"));
        assert!(err(quote!(mode = fast))[0].starts_with("unknown timer mode `fast`"));
        assert!(err(quote!(name = ""))[0].contains("cannot be empty"));
        assert!(err(quote!(name = b"x"))[0].contains("found `b\"x\"`"));
        assert!(err(quote!(name = 'x'))[0].contains("a string literal, e.g."));
    }

    #[test]
    fn syntax_errors() {
        assert!(err(quote!(Fast))[0].starts_with("unknown argument `Fast`"));
        assert!(err(quote!(mode))[0].starts_with("`mode` needs a value"));
        assert!(err(quote!("x"))[0].starts_with("expected an argument"));
        assert!(err(quote!(type = Fast))[0].starts_with("unknown argument `type`"));
        assert_eq!(err(quote!(mode = Fast name = "x"))[0], "expected `,`");
    }
}
