//! Code generation for `#[timed]`.
//!
//! The function is parsed only down to its signature: the body is kept as the tokens
//! the user wrote, and the timing prelude is put in front of them, inside the original
//! braces. So every statement, `return` and `?` behaves as before, and errors in the
//! body still point at the user's code.
//!
//! ```text
//! fn f(..) -> R { body }
//!   =>
//! fn f(..) -> R {
//!     static __LATTE_TIMED_ID: ::latte::__private::Id = ::latte::__private::Id::new("f");
//!     let __latte_timed_scope = ::latte::__private::scope(&__LATTE_TIMED_ID, Mode::A, Mode::B);
//!     body
//! }
//! ```
//!
//! An `async fn` gets a `Timer` instead of a stack scope: its body runs in a future
//! that may move between threads, and other tasks use the same thread's stack between
//! its polls.

use crate::attr::{self, Args, Name};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, ForeignItemFn, Item, Signature, Visibility, braced, token};

/// Expands `#[timed(args)] item`. On error the item is emitted unchanged after the
/// `compile_error!`s, so the error does not cascade into "cannot find function".
pub(crate) fn timed(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = attr::parse(args);
    let function = syn::parse2::<TimedFn>(item.clone())
        .map_err(|_| unsupported(&item))
        .and_then(supported);
    match (args, function) {
        (Ok(args), Ok(function)) => match parameter_as_name(&args, &function.sig) {
            Some(e) => with_item(e, item),
            None => expand(&args, function),
        },
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => with_item(e, item),
        (Err(mut e), Err(other)) => {
            e.combine(other);
            with_item(e, item)
        }
    }
}

fn with_item(error: syn::Error, item: TokenStream) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#error #item)
}

/// A function with a body, the body left as tokens.
struct TimedFn {
    attrs: Vec<Attribute>,
    vis: Visibility,
    sig: Signature,
    brace: token::Brace,
    inner_attrs: Vec<Attribute>,
    body: TokenStream,
}

impl Parse for TimedFn {
    fn parse(input: ParseStream) -> syn::Result<TimedFn> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body = content.parse()?;
        Ok(TimedFn {
            attrs,
            vis,
            sig,
            brace,
            inner_attrs,
            body,
        })
    }
}

/// `name = x` where `x` is a parameter of the function: the compiler's own error
/// ("this would need to be a `const`") cannot be followed for a parameter, so say what
/// works instead.
fn parameter_as_name(args: &Args, sig: &Signature) -> Option<syn::Error> {
    let Some(Name::Constant(syn::Expr::Path(path))) = &args.name else {
        return None;
    };
    let ident = path.path.get_ident()?;
    let is_parameter = sig.inputs.iter().any(|input| match input {
        syn::FnArg::Receiver(_) => ident == "self",
        syn::FnArg::Typed(typed) => {
            matches!(&*typed.pat, syn::Pat::Ident(p) if p.ident == *ident)
        }
    });
    is_parameter.then(|| {
        syn::Error::new_spanned(
            ident,
            format!(
                "`{ident}` is a parameter of `{}`, known only when it runs, but `name` must be \
                 known at compile time: a string literal (`name = \"...\"`) or a `&'static str` \
                 constant (`name = SOME_CONST`)",
                sig.ident
            ),
        )
    })
}

/// Rejects the functions that have a body but cannot be timed.
fn supported(function: TimedFn) -> syn::Result<TimedFn> {
    let sig = &function.sig;
    if let Some(constness) = &sig.constness {
        let (fn_token, ident) = (&sig.fn_token, &sig.ident);
        return Err(syn::Error::new_spanned(
            quote!(#constness #fn_token #ident),
            "#[timed] cannot be used on a `const fn`: a const fn may run at compile time, \
             where there is no clock to read and no thread to record into; \
             remove `const`, or time the run-time code that calls it",
        ));
    }
    Ok(function)
}

fn expand(args: &Args, function: TimedFn) -> TokenStream {
    let TimedFn {
        attrs,
        vis,
        sig,
        brace,
        inner_attrs,
        body,
    } = function;

    let id = static_id(args.name.as_ref(), &sig.ident);
    let start = Ident::new(args.start.variant(), Span::call_site());
    let stop = Ident::new(args.stop.variant(), Span::call_site());
    // `mixed_site`: the guard's binding is invisible to, and cannot be shadowed by,
    // the user's code.
    let guard;
    let open = if sig.asyncness.is_some() {
        guard = Ident::new("__latte_timed_timer", Span::mixed_site());
        quote!(::latte::__private::Timer::start)
    } else {
        guard = Ident::new("__latte_timed_scope", Span::mixed_site());
        quote!(::latte::__private::scope)
    };
    let prelude = quote! {
        #id
        let #guard = #open(
            &__LATTE_TIMED_ID,
            ::latte::__private::Mode::#start,
            ::latte::__private::Mode::#stop,
        );
    };

    let mut block = TokenStream::new();
    brace.surround(&mut block, |tokens| {
        tokens.extend(quote!(#(#inner_attrs)* #prelude #body));
    });
    quote!(#(#attrs)* #vis #sig #block)
}

/// The call site's `static __LATTE_TIMED_ID`. A literal (or the function's name) goes
/// straight into the static. A constant is first an associated `const` of a local
/// type: in a `static` initialiser, a value known only at run time (a parameter) would
/// draw rustc's help to turn the expansion's `static` into a `let`, which the user
/// cannot do; in an associated `const` the error is spanned on the user's expression.
fn static_id(name: Option<&Name>, ident: &Ident) -> TokenStream {
    let name = match name {
        Some(Name::Literal(lit)) => lit.clone(),
        Some(Name::Constant(expr)) => {
            return quote! {
                struct __LatteTimedName;
                impl __LatteTimedName {
                    const NAME: &'static str = #expr;
                }
                static __LATTE_TIMED_ID: ::latte::__private::Id =
                    ::latte::__private::Id::new(__LatteTimedName::NAME);
            };
        }
        // Like C++'s `__func__`: the bare identifier, `r#` removed.
        None => syn::LitStr::new(&syn::ext::IdentExt::unraw(ident).to_string(), ident.span()),
    };
    quote! {
        static __LATTE_TIMED_ID: ::latte::__private::Id = ::latte::__private::Id::new(#name);
    }
}

/// The error for anything that is not a function with a body, spanned on what it is.
fn unsupported(item: &TokenStream) -> syn::Error {
    if let Ok(decl) = syn::parse2::<ForeignItemFn>(item.clone()) {
        let (sig, semi) = (&decl.sig, &decl.semi_token);
        return syn::Error::new_spanned(
            quote!(#sig #semi),
            "#[timed] needs a function body to time, and this declaration has none; \
             put #[timed] on the functions that implement it",
        );
    }
    let (what, tokens) = match syn::parse2::<Item>(item.clone()) {
        Ok(item) => describe(&item),
        Err(_) => ("this item", item.clone()),
    };
    syn::Error::new_spanned(
        tokens,
        format!(
            "#[timed] applies to functions and methods with a body, not to {what}; \
             to time a block of code, use `latte::latte_scope!`"
        ),
    )
}

/// A noun phrase for `item`, and the tokens naming it (keyword and name).
fn describe(item: &Item) -> (&'static str, TokenStream) {
    match item {
        Item::Const(i) => ("a `const`", named(&i.const_token, &i.ident)),
        Item::Enum(i) => ("an `enum`", named(&i.enum_token, &i.ident)),
        Item::ExternCrate(i) => ("an `extern crate`", named(&i.crate_token, &i.ident)),
        Item::ForeignMod(i) => ("an `extern` block", i.abi.to_token_stream()),
        Item::Impl(i) => ("an `impl` block", named(&i.impl_token, &i.self_ty)),
        Item::Macro(i) => ("a macro invocation", i.mac.path.to_token_stream()),
        Item::Mod(i) => ("a `mod`", named(&i.mod_token, &i.ident)),
        Item::Static(i) => ("a `static`", named(&i.static_token, &i.ident)),
        Item::Struct(i) => ("a `struct`", named(&i.struct_token, &i.ident)),
        Item::Trait(i) => ("a `trait`", named(&i.trait_token, &i.ident)),
        Item::TraitAlias(i) => ("a trait alias", named(&i.trait_token, &i.ident)),
        Item::Type(i) => ("a `type` alias", named(&i.type_token, &i.ident)),
        Item::Union(i) => ("a `union`", named(&i.union_token, &i.ident)),
        other => ("this item", other.to_token_stream()),
    }
}

/// `keyword name`, to span an error on.
fn named(keyword: &impl ToTokens, name: &impl ToTokens) -> TokenStream {
    quote!(#keyword #name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: TokenStream, item: TokenStream) -> String {
        timed(args, item).to_string()
    }

    /// `quote!`'s spacing, for comparing token streams as text.
    fn text(tokens: TokenStream) -> String {
        tokens.to_string()
    }

    #[test]
    fn sync_fn_gets_a_scope_before_its_unchanged_body() {
        let out = expand(
            quote!(mode = Mid),
            quote! {
                #[inline]
                pub(crate) fn r#process<T: Copy>(x: T) -> Result<T, ()> where T: Send {
                    #![allow(unused)]
                    if false { return Err(()); }
                    Ok(x)
                }
            },
        );
        let expected = text(quote! {
            #[inline]
            pub(crate) fn r#process<T: Copy>(x: T) -> Result<T, ()> where T: Send {
                #![allow(unused)]
                static __LATTE_TIMED_ID: ::latte::__private::Id =
                    ::latte::__private::Id::new("process");
                let __latte_timed_scope = ::latte::__private::scope(
                    &__LATTE_TIMED_ID,
                    ::latte::__private::Mode::Mid,
                    ::latte::__private::Mode::Mid,
                );
                if false { return Err(()); }
                Ok(x)
            }
        });
        assert_eq!(out, expected);
    }

    #[test]
    fn async_fn_gets_a_timer() {
        let out = expand(
            quote!(name = "fetch quote", start = Hard),
            quote!(
                async fn fetch(&self) -> u8 {
                    self.get().await
                }
            ),
        );
        let expected = text(quote! {
            async fn fetch(&self) -> u8 {
                static __LATTE_TIMED_ID: ::latte::__private::Id =
                    ::latte::__private::Id::new("fetch quote");
                let __latte_timed_timer = ::latte::__private::Timer::start(
                    &__LATTE_TIMED_ID,
                    ::latte::__private::Mode::Hard,
                    ::latte::__private::Mode::Fast,
                );
                self.get().await
            }
        });
        assert_eq!(out, expected);
    }

    #[test]
    fn a_constant_name_is_an_associated_const_first() {
        let out = expand(
            quote!(name = ids::PARSE),
            quote!(
                fn parse() {}
            ),
        );
        let expected = text(quote! {
            fn parse() {
                struct __LatteTimedName;
                impl __LatteTimedName {
                    const NAME: &'static str = ids::PARSE;
                }
                static __LATTE_TIMED_ID: ::latte::__private::Id =
                    ::latte::__private::Id::new(__LatteTimedName::NAME);
                let __latte_timed_scope = ::latte::__private::scope(
                    &__LATTE_TIMED_ID,
                    ::latte::__private::Mode::Fast,
                    ::latte::__private::Mode::Fast,
                );
            }
        });
        assert_eq!(out, expected);
    }

    #[test]
    fn a_parameter_as_name_is_an_error_that_keeps_the_item() {
        for (args, item) in [
            (
                quote!(name = text),
                quote!(
                    fn parse(n: u8, text: &str) {}
                ),
            ),
            (
                quote!(name = self),
                quote!(
                    fn parse(&self) {}
                ),
            ),
        ] {
            let out = expand(args, item.clone());
            assert!(out.starts_with(":: core :: compile_error !"), "{out}");
            assert!(out.contains("is a parameter of `parse`"), "{out}");
            assert!(out.ends_with(&item.to_string()), "{out}");
        }
        // A constant that shares no name with a parameter is left to the compiler.
        let out = expand(
            quote!(name = TEXT),
            quote!(
                fn parse(text: &str) {}
            ),
        );
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn unsupported_items_keep_the_item_after_the_error() {
        for (item, message) in [
            (
                quote!(
                    struct S;
                ),
                "not to a `struct`;",
            ),
            (
                quote!(
                    const fn f() {}
                ),
                "cannot be used on a `const fn`",
            ),
            (
                quote!(
                    fn f(&self);
                ),
                "needs a function body",
            ),
            (
                quote!(
                    mod m {}
                ),
                "not to a `mod`;",
            ),
            (quote!(impl S {}), "not to an `impl` block;"),
            (quote!(a b c), "not to this item;"),
        ] {
            let out = expand(quote!(), item.clone());
            assert!(out.starts_with(":: core :: compile_error !"), "{out}");
            assert!(out.contains(message), "{out}");
            assert!(out.ends_with(&item.to_string()), "{out}");
        }
    }

    #[test]
    fn argument_and_item_errors_are_reported_together() {
        let out = expand(
            quote!(mode = Slow),
            quote!(
                struct S;
            ),
        );
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
    }
}
