//! The impl fn's signature: async, not generic, a free fn of `(run, args)`
//! with a return type. Every problem is reported at once.

use syn::spanned::Spanned;

use crate::errors::Errors;

/// The args type of a well-formed impl fn.
pub fn check(func: &syn::ItemFn) -> syn::Result<Box<syn::Type>> {
    let sig = &func.sig;
    let mut errors = Errors::default();
    if sig.asyncness.is_none() {
        errors.push(sig.fn_token.span, "a capability impl must be an `async fn`");
    }
    if !sig.generics.params.is_empty() {
        errors.push(sig.generics.span(), "a capability impl cannot be generic");
    }
    let args_ty = match sig.inputs.iter().collect::<Vec<_>>().as_slice() {
        [syn::FnArg::Typed(_run), syn::FnArg::Typed(args)] => Some(args.ty.clone()),
        [syn::FnArg::Receiver(r), ..] | [_, syn::FnArg::Receiver(r)] => {
            errors.push(r.span(), "a capability impl is a free fn, not a method");
            None
        }
        _ => {
            errors.push(sig.inputs.span(), "a capability impl takes exactly two arguments: `(run: &Run, args: <path>::Args)`");
            None
        }
    };
    if let syn::ReturnType::Default = sig.output {
        errors.push(sig.ident.span(), "a capability impl returns `CapResult<T>` with `T: Serialize`");
    }
    errors.finish()?;
    Ok(args_ty.expect("a missing args type is an error above"))
}
