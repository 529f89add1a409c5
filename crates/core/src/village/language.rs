//! The village language (`ja` / `en`) that model-facing text follows, kept as written so that a
//! value this version does not know survives a round trip.

use serde::{Deserialize, Serialize};

/// A language the model-facing text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Japanese (the original's first language; its text is kept byte-identical).
    Ja,
    /// English.
    En,
}

impl Language {
    /// The spelling in `world.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ja => "ja",
            Self::En => "en",
        }
    }

    /// Picks the Japanese or the English text (only the chosen one is converted). Where several
    /// texts or a whole table change together, a `match` on the language chooses them at once.
    pub fn pick(self, ja: impl Into<String>, en: impl Into<String>) -> String {
        match self {
            Self::Ja => ja.into(),
            Self::En => en.into(),
        }
    }

    /// Parses `ja` / `en` exactly.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ja" => Some(Self::Ja),
            "en" => Some(Self::En),
            _ => None,
        }
    }

    /// Detects the language from an OS locale string (`LANG`, `LC_ALL`): Japanese locales give
    /// `ja`, anything else (or nothing) gives `en`.
    pub fn from_locale(locale: Option<&str>) -> Self {
        match locale {
            Some(l) if l.trim().to_ascii_lowercase().starts_with("ja") => Self::Ja,
            _ => Self::En,
        }
    }
}

/// The `language` value of `world.json` exactly as written. Unknown values are kept (so they
/// survive a write) but count as undetermined.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LanguageTag(String);

impl LanguageTag {
    /// The tag for a known language.
    pub fn of(language: Language) -> Self {
        Self(language.as_str().to_owned())
    }

    /// The language, when the tag is one this version knows.
    pub fn language(&self) -> Option<Language> {
        Language::parse(&self.0)
    }

    /// The tag as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_detection() {
        assert_eq!(Language::from_locale(Some("ja_JP.UTF-8")), Language::Ja);
        assert_eq!(Language::from_locale(Some("en_US.UTF-8")), Language::En);
        assert_eq!(Language::from_locale(None), Language::En);
        assert_eq!(LanguageTag::of(Language::Ja).language(), Some(Language::Ja));
        assert_eq!(LanguageTag("zh".into()).language(), None);
    }
}
