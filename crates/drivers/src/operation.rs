//! The operations a driver runs one kind at a time (a Redis command, a SQL suite step, a
//! MongoDB or Vault operation), named on the command line, in plan files and in tables.
//! [`operations!`](crate::operations) declares such an enum with each variant's name beside
//! it, so the list of names, the parser and the help text all come from that one place.

/// An operation kind, by the name flags, plans and tables give it.
pub trait Operation: Copy + Eq + Sized + 'static {
    /// Every operation, in the order a suite runs them.
    const ALL: &'static [Self];

    /// The name flags, plans and tables use.
    fn name(self) -> &'static str;

    /// The operation `name` names, in any case.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|o| o.name().eq_ignore_ascii_case(name))
    }

    /// Every name in suite order, comma-separated: for errors and help.
    fn names() -> String {
        Self::ALL
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Declares an enum of operations, each `Variant = "name"`, in the order a suite runs them,
/// and implements [`Operation`] for it.
#[macro_export]
macro_rules! operations {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $crate::operation::Operation for $name {
            const ALL: &'static [$name] = &[$($name::$variant,)*];

            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Operation;

    crate::operations! {
        /// A test's operations.
        enum Op {
            First = "first",
            SecondOne = "second-one",
        }
    }

    #[test]
    fn names_parse_back_in_any_case_and_list_in_order() {
        for &op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
        assert_eq!(Op::from_name("SECOND-ONE"), Some(Op::SecondOne));
        assert_eq!(Op::from_name("third"), None);
        assert_eq!(Op::names(), "first, second-one");
    }
}
