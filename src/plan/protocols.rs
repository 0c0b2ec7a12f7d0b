//! Each protocol's plan file behind one `match` per question, made from the one list
//! (`crate::backend::each_protocol!`): a workload's table read as its protocol's fields, a
//! target's URL checked, and the fields each protocol's targets and workloads take.

use super::fields::{self, At, Fields as _, Made, Table};
use super::model::PlanError;
use crate::backend::Kind;
use url::Url;

macro_rules! readers {
    ($($(#[$doc:meta])* $m:ident => $variant:ident($target:ident), $feature:literal,
       [$($scheme:literal),*], $shown:literal, $above_http:literal;)*) => {
        /// The workload's table read as protocol `kind`'s fields, into what they make.
        pub(super) fn read_workload(
            kind: Kind,
            at: &At<'_>,
            table: &Table<'_>,
        ) -> Result<Made, PlanError> {
            match kind {
                $(Kind::$variant => built!(
                    $feature,
                    fields::read_as::<super::$m::Fields>(at, table, workload_fields)
                ),)*
            }
        }

        /// A target's URL checked by its protocol (and parsed, where its workloads want it).
        pub(super) fn check_url(kind: Kind, url: &str, shown: &str) -> Result<Option<Url>, String> {
            match kind {
                $(Kind::$variant => built!($feature, super::$m::Fields::url(url, shown)),)*
            }
        }

        /// The target fields (beyond `url` and `headers`) protocol `kind` takes; none for a
        /// protocol this binary lacks.
        pub(super) fn target_fields(kind: Kind) -> &'static [&'static str] {
            match kind {
                $(Kind::$variant => {
                    #[cfg(feature = $feature)]
                    let fields = super::$m::Fields::TARGET_FIELDS;
                    #[cfg(not(feature = $feature))]
                    let fields = &[];
                    fields
                })*
            }
        }

        /// The workload fields protocol `kind` takes; none for a protocol this binary lacks.
        fn workload_fields(kind: Kind) -> &'static [&'static str] {
            match kind {
                $(Kind::$variant => {
                    #[cfg(feature = $feature)]
                    let fields = fields::names_of::<super::$m::Fields>();
                    #[cfg(not(feature = $feature))]
                    let fields = &[];
                    fields
                })*
            }
        }
    };
}
crate::backend::each_protocol!(readers);
