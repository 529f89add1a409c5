//! A small lexer for the page's JavaScript (the page check's input): identifiers, strings,
//! numbers and punctuation with their line; comments dropped; a template literal's `${…}`
//! parts lexed as code; regular-expression literals skipped; and a file's brackets matched.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Str,
    Num,
    Punct,
}

/// One token.
#[derive(Debug, Clone)]
pub(super) struct Tok {
    pub(super) kind: Kind,
    pub(super) text: String,
    pub(super) line: usize,
}

const PUNCTS: &[&str] = &[
    "...", "===", "!==", "??=", "||=", "&&=", "=>", "==", "!=", "?.", "&&", "||", "??", "<=", ">=",
    "+=", "-=", "*=", "/=", "++", "--",
];

/// Words after which a `/` starts a regular expression, not a division.
const BEFORE_REGEX: &[&str] = &[
    "return", "typeof", "case", "in", "of", "new", "delete", "void",
];

/// The tokens of `src`.
pub(super) fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Brace depths at which a template literal's `${` was opened.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                line += usize::from(c[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if ch == '\'' || ch == '"' {
            let (text, end) = quoted(&c, i, ch, &mut line);
            out.push(tok(Kind::Str, text, line));
            i = end;
        } else if ch == '`' || (ch == '}' && templates.last() == Some(&depth)) {
            if ch == '}' {
                templates.pop();
            }
            i = template(&c, i + 1, &mut line, &mut out);
            if c.get(i.wrapping_sub(2)) == Some(&'$') && c.get(i - 1) == Some(&'{') {
                templates.push(depth);
            }
        } else if ch == '/' && regex_may_start(out.last()) {
            i = regex(&c, i + 1);
            out.push(tok(Kind::Str, String::new(), line));
        } else if ch.is_alphabetic() || ch == '_' || ch == '$' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '$') {
                i += 1;
            }
            out.push(tok(Kind::Ident, c[start..i].iter().collect(), line));
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '.' || c[i] == '_') {
                i += 1;
            }
            out.push(tok(Kind::Num, c[start..i].iter().collect(), line));
        } else {
            let rest: String = c[i..c.len().min(i + 3)].iter().collect();
            let p = PUNCTS
                .iter()
                .find(|p| rest.starts_with(**p))
                .map_or_else(|| ch.to_string(), |p| (*p).to_owned());
            match p.as_str() {
                "{" => depth += 1,
                "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += p.chars().count();
            out.push(tok(Kind::Punct, p, line));
        }
    }
    out
}

fn tok(kind: Kind, text: String, line: usize) -> Tok {
    Tok { kind, text, line }
}

fn quoted(c: &[char], start: usize, q: char, line: &mut usize) -> (String, usize) {
    let mut i = start + 1;
    let mut text = String::new();
    while i < c.len() && c[i] != q {
        if c[i] == '\\' {
            i += 1;
        }
        if let Some(ch) = c.get(i) {
            *line += usize::from(*ch == '\n');
            text.push(*ch);
        }
        i += 1;
    }
    (text, i + 1)
}

/// Skips a template literal's text from `i`; stops past its closing backtick or past a `${`.
fn template(c: &[char], mut i: usize, line: &mut usize, out: &mut Vec<Tok>) -> usize {
    let start_line = *line;
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '`' => {
                out.push(tok(Kind::Str, String::new(), start_line));
                return i + 1;
            }
            '$' if c.get(i + 1) == Some(&'{') => {
                out.push(tok(Kind::Str, String::new(), start_line));
                out.push(tok(Kind::Punct, "+".into(), *line));
                return i + 2;
            }
            ch => {
                *line += usize::from(ch == '\n');
                i += 1;
            }
        }
    }
    i
}

fn regex_may_start(prev: Option<&Tok>) -> bool {
    match prev {
        None => true,
        Some(t) => match t.kind {
            Kind::Punct => !matches!(t.text.as_str(), ")" | "]" | "}" | "++" | "--"),
            Kind::Ident => BEFORE_REGEX.contains(&t.text.as_str()),
            Kind::Str | Kind::Num => false,
        },
    }
}

fn regex(c: &[char], mut i: usize) -> usize {
    let mut class = false;
    while i < c.len() && c[i] != '\n' {
        match c[i] {
            '\\' => i += 1,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => break,
            _ => {}
        }
        i += 1;
    }
    i += 1;
    while i < c.len() && c[i].is_alphabetic() {
        i += 1;
    }
    i
}

/// One JavaScript file, lexed, with its brackets matched.
pub(super) struct Src {
    pub(super) name: String,
    pub(super) toks: Vec<Tok>,
    /// For an opening bracket, its closing one (else `usize::MAX`).
    pub(super) close: Vec<usize>,
    /// For a closing bracket, its opening one (else `usize::MAX`).
    pub(super) open: Vec<usize>,
    /// The end of the innermost `{…}` holding each token (the file's end at the top).
    pub(super) block_end: Vec<usize>,
}

impl Src {
    pub(super) fn new(name: String, text: &str) -> Self {
        let toks = lex(text);
        let n = toks.len();
        let (mut close, mut open) = (vec![usize::MAX; n], vec![usize::MAX; n]);
        let mut stack = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            match t.text.as_str() {
                "(" | "[" | "{" if t.kind == Kind::Punct => stack.push(i),
                ")" | "]" | "}" if t.kind == Kind::Punct => {
                    if let Some(o) = stack.pop() {
                        close[o] = i;
                        open[i] = o;
                    }
                }
                _ => {}
            }
        }
        let mut block_end = vec![n; n];
        let mut blocks: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            block_end[i] = blocks.last().map_or(n, |o| close[*o].min(n));
            if t.kind == Kind::Punct && t.text == "{" && close[i] != usize::MAX {
                blocks.push(i);
            } else if t.kind == Kind::Punct && t.text == "}" {
                blocks.retain(|o| close[*o] != i);
            }
        }
        Self {
            name,
            toks,
            close,
            open,
            block_end,
        }
    }

    pub(super) fn is(&self, i: usize, text: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| t.text == text && t.kind != Kind::Str)
    }

    pub(super) fn ident(&self, i: usize) -> Option<&str> {
        self.toks
            .get(i)
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| t.text.as_str())
    }

    /// The end of an arrow's body whose `=>` is at `arrow`.
    pub(super) fn arrow_end(&self, arrow: usize) -> usize {
        if self.is(arrow + 1, "{") {
            return self.close[arrow + 1];
        }
        let mut i = arrow + 1;
        while i < self.toks.len() {
            let t = &self.toks[i];
            if t.kind == Kind::Punct {
                match t.text.as_str() {
                    "(" | "[" | "{" => i = self.close[i],
                    ")" | "]" | "}" | "," | ";" => return i,
                    _ => {}
                }
            }
            i += 1;
        }
        i
    }

    /// The simple parameter names of a list opened at `open` (`(a, b = 1, {c})` gives a, b).
    pub(super) fn params(&self, open: usize) -> Vec<(usize, String)> {
        let end = self.close[open];
        let mut out = Vec::new();
        let mut i = open + 1;
        let mut at_start = true;
        while i < end {
            match (self.ident(i), self.toks[i].text.as_str()) {
                (Some(name), _) if at_start => out.push((i, name.to_owned())),
                (_, "(" | "[" | "{") => i = self.close[i],
                (_, ",") => {
                    at_start = true;
                    i += 1;
                    continue;
                }
                _ => {}
            }
            at_start = false;
            i += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_templates_regexes_and_comments_lex_apart() {
        let toks = lex("const a = `x${r.b}y` / 2; // c.d\nx = /a\\/b[/]/g.test(s) ? 'q' : r?.e;");
        let texts: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "const", "a", "=", "", "+", "r", ".", "b", "", "/", "2", ";", "x", "=", "", ".",
                "test", "(", "s", ")", "?", "q", ":", "r", "?.", "e", ";"
            ]
        );
        assert_eq!(toks.last().map(|t| t.line), Some(2));
    }
}
