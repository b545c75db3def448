//! The kits: the classes (and functions) a native path checks objects
//! against or makes them with, handed over by Python as a tuple in a fixed
//! order, read into a struct with one field per item.

/// A kit struct `$name` with the fields listed, in the order Python hands
/// them over, and its `from_tuple` (None unless the tuple has exactly that
/// many items).
macro_rules! kit {
    ($(#[$meta:meta])* $name:ident { $($field:ident),+ $(,)? }) => {
        $(#[$meta])*
        pub struct $name<'py> {
            $($field: pyo3::Bound<'py, pyo3::PyAny>,)+
        }

        impl<'py> $name<'py> {
            /// How many items the tuple has.
            pub const LEN: usize = [$(stringify!($field)),+].len();

            /// The kit from its tuple (None when it has another length).
            pub fn from_tuple(kit: &pyo3::Bound<'py, pyo3::types::PyTuple>) -> Option<Self> {
                use pyo3::types::PyTupleMethods;
                if kit.len() != Self::LEN {
                    return None;
                }
                let mut items = kit.iter();
                Some(Self {
                    $($field: items.next()?,)+
                })
            }

            /// The kit `function` was handed, or the `TypeError` that says what it needs.
            pub fn of(
                kit: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                function: &str,
            ) -> pyo3::PyResult<Self> {
                Self::from_tuple(kit).ok_or_else(|| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "{function}: kit has to be {} items",
                        Self::LEN
                    ))
                })
            }
        }
    };
}

pub(crate) use kit;
