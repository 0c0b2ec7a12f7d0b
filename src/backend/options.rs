//! Option names that flags and plan files both read, each defined once: a protocol's enums
//! derive clap's `ValueEnum` (in its own module), so `--mode publish` and `mode = "publish"`
//! are read by the same definition ([`choose`]) and list the same choices in their errors.

use clap::ValueEnum;

/// The name a flag or a plan gives `v`.
pub fn name_of<T: ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

/// Reads `text` (any case) as one of `T`'s names, among those `allowed` keeps; the error lists
/// the allowed names.
pub fn choose<T: ValueEnum + Copy>(text: &str, allowed: impl Fn(T) -> bool) -> Result<T, String> {
    let found = T::from_str(text, true).ok().filter(|v| allowed(*v));
    found.ok_or_else(|| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .copied()
            .filter(|v| allowed(*v))
            .map(name_of)
            .collect();
        format!("'{text}': use one of {}", names.join(", "))
    })
}
