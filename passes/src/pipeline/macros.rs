//! The declarative macros behind typed pass options.

/// Implements [`OptionValue`](crate::pipeline::OptionValue) for a type that already implements
/// `FromStr` (with a displayable error) and `Display`; the second argument is the type name
/// shown in errors and `--list-passes`.
///
/// ```ignore
/// ipu_passes::impl_option_value!(TileId, "tile id");
/// ```
#[macro_export]
macro_rules! impl_option_value {
    ($ty:ty, $type_name:expr) => {
        impl $crate::pipeline::OptionValue for $ty {
            fn type_name() -> ::std::string::String {
                ::std::string::ToString::to_string($type_name)
            }

            fn parse_value(text: &str) -> ::std::result::Result<Self, ::std::string::String> {
                <$ty as ::std::str::FromStr>::from_str(text)
                    .map_err(|error| ::std::string::ToString::to_string(&error))
            }

            fn print_value(&self) -> ::std::string::String {
                ::std::string::ToString::to_string(self)
            }
        }
    };
}

/// An enum usable as an option value, with `Display`, `FromStr` and the spelling of each
/// variant in one place.
///
/// ```
/// ipu_passes::option_enum! {
///     /// Storage precision.
///     pub enum Precision {
///         Fp32 = "fp32",
///         Fp16 = "fp16",
///         Fp8 = "fp8",
///     }
/// }
/// assert_eq!("fp16".parse::<Precision>(), Ok(Precision::Fp16));
/// assert_eq!(Precision::Fp8.to_string(), "fp8");
/// ```
#[macro_export]
macro_rules! option_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The variant's spelling in pipelines.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::pipeline::UnknownVariant;

            fn from_str(text: &str) -> ::std::result::Result<Self, Self::Err> {
                match text {
                    $( $text => Ok($name::$variant), )+
                    _ => Err($crate::pipeline::UnknownVariant {
                        value: ::std::string::ToString::to_string(text),
                        valid: ::std::vec![$($text),+],
                    }),
                }
            }
        }

        impl $crate::pipeline::OptionValue for $name {
            fn type_name() -> ::std::string::String {
                ::std::format!("one of {}", [$($text),+].join("|"))
            }

            fn parse_value(text: &str) -> ::std::result::Result<Self, ::std::string::String> {
                <$name as ::std::str::FromStr>::from_str(text)
                    .map_err(|error| ::std::string::ToString::to_string(&error))
            }

            fn print_value(&self) -> ::std::string::String {
                ::std::string::ToString::to_string(self.as_str())
            }
        }
    };
}

/// A pass's options as one struct: fields with their types, defaults and doc comments (the
/// help); generates the struct (all fields `pub`), `Default`, and
/// [`PassOptions`](crate::pipeline::PassOptions). Option keys are the field names in
/// kebab-case (`max_iterations` -> `max-iterations`).
///
/// Field types: `bool`, integers, `f32`/`f64`, `String`, enums from
/// [`option_enum!`](crate::option_enum) or [`impl_option_value!`](crate::impl_option_value),
/// `Vec<T>` (`1,2,3`) and `Option<T>` (empty is `None`) of those.
///
/// ```
/// use ipu_passes::pipeline::PassOptions;
///
/// ipu_passes::pass_options! {
///     /// Options of `ipu-canonicalize`.
///     pub struct CanonicalizeOptions for "ipu-canonicalize" {
///         /// Upper bound on greedy rewrite iterations.
///         max_iterations: u32 = 10,
///         /// Tile counts to try.
///         tiles: Vec<u32> = vec![16, 64],
///         /// Stop after this many rewrites, if set.
///         max_rewrites: Option<u64> = None,
///     }
/// }
///
/// let options = CanonicalizeOptions::parse("{max-iterations=3 tiles=1,2}").unwrap();
/// assert_eq!(options.max_iterations, 3);
/// assert_eq!(options.print(), "{max-iterations=3 tiles=1,2 max-rewrites=}");
/// ```
#[macro_export]
macro_rules! pass_options {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident for $pass:literal {
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty = $default:expr
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        $vis struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl ::std::default::Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $crate::pipeline::PassOptions for $name {
            fn pass_name() -> &'static str {
                $pass
            }

            fn describe() -> ::std::vec::Vec<$crate::pipeline::OptionInfo> {
                let defaults = <Self as ::std::default::Default>::default();
                let _ = &defaults;
                ::std::vec![$(
                    $crate::pipeline::OptionInfo {
                        name: $crate::pipeline::option_name(stringify!($field)),
                        type_name: <$ty as $crate::pipeline::OptionValue>::type_name(),
                        default: $crate::pipeline::format_option_value(
                            &$crate::pipeline::OptionValue::print_value(&defaults.$field),
                        ),
                        help: $crate::pipeline::help_text(&[$($doc),*]),
                    },
                )*]
            }

            fn set(
                &mut self,
                key: &str,
                value: &str,
            ) -> ::std::result::Result<(), $crate::pipeline::OptionError> {
                $(
                    if key == $crate::pipeline::option_name(stringify!($field)) {
                        self.$field = <$ty as $crate::pipeline::OptionValue>::parse_value(value)
                            .map_err(|reason| $crate::pipeline::OptionError::InvalidValue {
                                pass: ::std::string::ToString::to_string($pass),
                                option: ::std::string::ToString::to_string(key),
                                value: ::std::string::ToString::to_string(value),
                                expected:
                                    <$ty as $crate::pipeline::OptionValue>::type_name(),
                                reason,
                            })?;
                        return Ok(());
                    }
                )*
                let _ = value;
                Err($crate::pipeline::OptionError::UnknownOption {
                    pass: ::std::string::ToString::to_string($pass),
                    key: ::std::string::ToString::to_string(key),
                    valid: <Self as $crate::pipeline::PassOptions>::option_names(),
                })
            }

            fn print(&self) -> ::std::string::String {
                #[allow(unused_mut)]
                let mut parts: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();
                $(
                    parts.push(::std::format!(
                        "{}={}",
                        $crate::pipeline::option_name(stringify!($field)),
                        $crate::pipeline::format_option_value(
                            &$crate::pipeline::OptionValue::print_value(&self.$field)
                        )
                    ));
                )*
                ::std::format!("{{{}}}", parts.join(" "))
            }
        }
    };
}
