//! The `when` expression of a judge rule (docs/formats/judge.toml.md): a hand-written lexer and
//! recursive-descent parser. `or` < `and` < `not` < comparison; values `q`, `q.p`, `q.margin`,
//! `q.mean`; ops `== != >= <= > <` and `in [..]`; literals are non-negative numbers or keys.
//! Errors carry the byte offset in the expression. Depth and length are bounded.

use std::fmt;

/// The longest expression read (bytes).
pub(crate) const MAX_EXPR_BYTES: usize = 4_096;
/// The deepest nesting of parentheses and `not`.
pub(crate) const MAX_DEPTH: usize = 32;

/// Which number of a question a value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// `q`: the chosen key, the top level, or the noul probability.
    Value,
    /// `q.p`: the probability of the chosen key or level.
    P,
    /// `q.margin`: top-1 minus top-2 probability.
    Margin,
    /// `q.mean`: the expected level, 1-based.
    Mean,
}

impl Property {
    fn suffix(self) -> &'static str {
        match self {
            Property::Value => "",
            Property::P => ".p",
            Property::Margin => ".margin",
            Property::Mean => ".mean",
        }
    }
}

/// A value of a comparison: a question and a property.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRef {
    /// The question's name.
    pub question: String,
    /// Which of its numbers.
    pub property: Property,
    /// Byte offset of the value in the expression.
    pub at: usize,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `<`
    Lt,
}

impl Op {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Ge => ">=",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Lt => "<",
        }
    }
}

/// A literal: a non-negative number or a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `[0-9]+(\.[0-9]+)?`, with its text (for level checks).
    Number(f64, String),
    /// A choice key.
    Key(String),
}

/// A literal with its byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Lit {
    /// The literal.
    pub value: Literal,
    /// Byte offset in the expression.
    pub at: usize,
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `a or b or …`
    Or(Vec<Expr>),
    /// `a and b and …`
    And(Vec<Expr>),
    /// `not a`
    Not(Box<Expr>),
    /// `value op literal`
    Compare(ValueRef, Op, Lit),
    /// `value in [literal, …]`
    In(ValueRef, Vec<Lit>),
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Literal::Number(_, text) => f.write_str(text),
            Literal::Key(k) => f.write_str(k),
        }
    }
}

impl fmt::Display for ValueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.question, self.property.suffix())
    }
}

/// Fully parenthesised, so that the golden tests show precedence.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, parts: &[Expr], word: &str| {
            f.write_str("(")?;
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    write!(f, " {word} ")?;
                }
                write!(f, "{p}")?;
            }
            f.write_str(")")
        };
        match self {
            Expr::Or(parts) => join(f, parts, "or"),
            Expr::And(parts) => join(f, parts, "and"),
            Expr::Not(inner) => write!(f, "(not {inner})"),
            Expr::Compare(v, op, lit) => write!(f, "({v} {} {lit})", op.text()),
            Expr::In(v, lits) => {
                write!(f, "({v} in [")?;
                for (i, l) in lits.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{l}")?;
                }
                f.write_str("])")
            }
        }
    }
}

/// A grammar error: what and where (byte offset in the expression).
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    /// Byte offset in the expression.
    pub at: usize,
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub fix: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Number(String),
    Op(Op),
    Dot,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    End,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) => format!("{w:?}"),
        Tok::Number(n) => format!("the number {n}"),
        Tok::Op(op) => format!("{:?}", op.text()),
        Tok::Dot => "\".\"".into(),
        Tok::LParen => "\"(\"".into(),
        Tok::RParen => "\")\"".into(),
        Tok::LBracket => "\"[\"".into(),
        Tok::RBracket => "\"]\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::End => "the end of the expression".into(),
    }
}

fn err(at: usize, message: impl Into<String>, fix: impl Into<String>) -> ExprError {
    ExprError {
        at,
        message: message.into(),
        fix: fix.into(),
    }
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let two = bytes.get(i + 1).copied();
        let tok = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push((Tok::Word(text[start..i].to_string()), start));
                continue;
            }
            b'0'..=b'9' => {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] == b'.' {
                    if !bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                        return Err(err(
                            i,
                            "a number ends with \".\"",
                            "write digits after the point (0.5) or none (1)",
                        ));
                    }
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                out.push((Tok::Number(text[start..i].to_string()), start));
                continue;
            }
            b'=' if two == Some(b'=') => Tok::Op(Op::Eq),
            b'!' if two == Some(b'=') => Tok::Op(Op::Ne),
            b'>' if two == Some(b'=') => Tok::Op(Op::Ge),
            b'<' if two == Some(b'=') => Tok::Op(Op::Le),
            b'>' => Tok::Op(Op::Gt),
            b'<' => Tok::Op(Op::Lt),
            b'.' => Tok::Dot,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b',' => Tok::Comma,
            b'=' => {
                return Err(err(
                    i,
                    "\"=\" alone is not an operator",
                    "compare with \"==\"",
                ));
            }
            b'-' => {
                return Err(err(
                    i,
                    "negative numbers and arithmetic are not part of the grammar",
                    "compare with a non-negative number",
                ));
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(err(
                    i,
                    format!("unexpected character {ch:?}"),
                    "use question names, . p/margin/mean, == != >= <= > <, in [..], and, or, not, ( )",
                ));
            }
        };
        i += match tok {
            Tok::Op(Op::Gt) | Tok::Op(Op::Lt) => 1,
            Tok::Op(_) => 2,
            _ => 1,
        };
        out.push((tok, start));
    }
    out.push((Tok::End, text.len()));
    Ok(out)
}

/// True for the reserved words of the grammar.
pub fn is_reserved(word: &str) -> bool {
    matches!(word, "and" | "or" | "not" | "in")
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &(Tok, usize) {
        // `lex` always ends with `End`, and `pos` never passes it.
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn bump(&mut self) -> (Tok, usize) {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(&self.peek().0, Tok::Word(w) if w == word)
    }

    fn deeper(&mut self, at: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(err(
                at,
                format!("the expression nests deeper than {MAX_DEPTH} levels"),
                "split the rule into several rules",
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, ExprError> {
        let mut parts = vec![self.and()?];
        while self.is_word("or") {
            self.bump();
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut parts = vec![self.unary()?];
        while self.is_word("and") {
            self.bump();
            parts.push(self.unary()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::And(parts)
        })
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        let at = self.peek().1;
        if self.is_word("not") {
            self.bump();
            self.deeper(at)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        if self.peek().0 == Tok::LParen {
            self.bump();
            self.deeper(at)?;
            let inner = self.or()?;
            self.depth -= 1;
            let (tok, close) = self.bump();
            if tok != Tok::RParen {
                return Err(err(
                    close,
                    format!("expected \")\" but found {}", describe(&tok)),
                    format!("close the \"(\" at offset {at}"),
                ));
            }
            return Ok(inner);
        }
        self.comparison()
    }

    fn value(&mut self) -> Result<ValueRef, ExprError> {
        let (tok, at) = self.bump();
        let question = match tok {
            Tok::Word(w) if !is_reserved(&w) => w,
            other => {
                return Err(err(
                    at,
                    format!("expected a question name but found {}", describe(&other)),
                    "start a comparison with a question: q, q.p, q.margin or q.mean",
                ));
            }
        };
        let mut property = Property::Value;
        if self.peek().0 == Tok::Dot {
            self.bump();
            let (tok, pat) = self.bump();
            property = match &tok {
                Tok::Word(w) if w == "p" => Property::P,
                Tok::Word(w) if w == "margin" => Property::Margin,
                Tok::Word(w) if w == "mean" => Property::Mean,
                other => {
                    return Err(err(
                        pat,
                        format!("unknown property {}", describe(other)),
                        "use .p, .margin or .mean (.confidence is not allowed)",
                    ));
                }
            };
        }
        Ok(ValueRef {
            question,
            property,
            at,
        })
    }

    fn literal(&mut self) -> Result<Lit, ExprError> {
        let (tok, at) = self.bump();
        let value = match tok {
            Tok::Number(text) => match text.parse::<f64>() {
                Ok(n) if n.is_finite() => Literal::Number(n, text),
                _ => return Err(err(at, "the number is too large", "write a smaller number")),
            },
            Tok::Word(w) if !is_reserved(&w) => Literal::Key(w),
            other => {
                return Err(err(
                    at,
                    format!("expected a number or a key but found {}", describe(&other)),
                    "compare with a non-negative number (0.5, 2) or a choice key",
                ));
            }
        };
        Ok(Lit { value, at })
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        let value = self.value()?;
        let (tok, at) = self.bump();
        match tok {
            Tok::Op(op) => Ok(Expr::Compare(value, op, self.literal()?)),
            Tok::Word(w) if w == "in" => {
                let (open, oat) = self.bump();
                if open != Tok::LBracket {
                    return Err(err(
                        oat,
                        format!("expected \"[\" after in but found {}", describe(&open)),
                        "write in [a, b]",
                    ));
                }
                let mut lits = vec![self.literal()?];
                loop {
                    let (tok, tat) = self.bump();
                    match tok {
                        Tok::Comma => lits.push(self.literal()?),
                        Tok::RBracket => break,
                        other => {
                            return Err(err(
                                tat,
                                format!("expected \",\" or \"]\" but found {}", describe(&other)),
                                "write in [a, b]",
                            ));
                        }
                    }
                }
                Ok(Expr::In(value, lits))
            }
            other => Err(err(
                at,
                format!(
                    "expected an operator (== != >= <= > < in) but found {}",
                    describe(&other)
                ),
                "compare the value with a literal: q == key, q.p >= 0.5, q in [a, b]",
            )),
        }
    }
}

/// Parses an expression.
pub fn parse_expr(text: &str) -> Result<Expr, ExprError> {
    if text.len() > MAX_EXPR_BYTES {
        return Err(err(
            0,
            format!("the expression is longer than {MAX_EXPR_BYTES} bytes"),
            "split the rule into several rules",
        ));
    }
    if text.trim().is_empty() {
        return Err(err(
            0,
            "the expression is empty",
            "write a condition such as kind == other",
        ));
    }
    let toks = lex(text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let expr = p.or()?;
    let (tok, at) = p.bump();
    if tok != Tok::End {
        return Err(err(
            at,
            format!("unexpected {} after a complete condition", describe(&tok)),
            "join conditions with and / or",
        ));
    }
    Ok(expr)
}
