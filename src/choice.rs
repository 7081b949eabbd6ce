//! Named choices: the library's option enums (output format, input kind, colour, …) say their
//! own names and one-line help, so that a front end (the command line, a config file) can offer
//! them without the library knowing that front end.

/// An option enum with a fixed set of named values.
pub trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every value with its name (lower case, as typed) and a one-line help, in the order shown.
    const CHOICES: &'static [(&'static str, &'static str, Self)];

    /// The value called `name` (any case).
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, _, v)| v)
    }

    /// This value's name.
    fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|(_, _, v)| *v == self)
            .map_or("", |(n, _, _)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::Choice;

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Two {
        A,
        B,
    }
    impl Choice for Two {
        const CHOICES: &'static [(&'static str, &'static str, Self)] =
            &[("a", "the first", Two::A), ("bee", "the second", Two::B)];
    }

    #[test]
    fn names_round_trip_in_any_case() {
        assert_eq!(Two::from_name("BEE"), Some(Two::B));
        assert_eq!(Two::from_name("c"), None);
        assert_eq!(Two::A.name(), "a");
        assert_eq!(Two::B.name(), "bee");
    }
}
