#include "engine/comparison_rule.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

namespace vl {

std::string to_string(RuleKind kind) {
  switch (kind) {
    case RuleKind::exact: return "exact";
    case RuleKind::ws: return "ws";
    case RuleKind::numeric: return "numeric";
    case RuleKind::bound: return "bound";
    case RuleKind::machine: return "machine";
  }
  return "?";
}

namespace {

double parse_number(const std::string& word, const std::string& what) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || !std::isfinite(value) || value < 0)
    throw std::invalid_argument(fmt::format("{} must be a non-negative number, got '{}'", what, word));
  return value;
}

// "line N", "lines A-B", optionally "number M", before the colon.
void parse_target(const std::string& target, LineRule& rule) {
  static const std::regex form(R"(^\s*(line|lines)\s+(\d+)(?:\s*-\s*(\d+))?(?:\s+number\s+(\d+))?\s*$)");
  std::smatch m;
  if (!std::regex_match(target, m, form))
    throw std::invalid_argument(
        fmt::format("rule target '{}' is not 'line N', 'lines A-B' or '... number M'", target));
  rule.first_line = std::stoi(m[2]);
  rule.last_line = m[3].matched ? std::stoi(m[3]) : rule.first_line;
  if (m[4].matched) rule.number = std::stoi(m[4]);
  if (rule.first_line < 1 || rule.last_line < rule.first_line || (rule.number && *rule.number < 1))
    throw std::invalid_argument(fmt::format("rule target '{}': lines and numbers count from 1", target));
}

}  // namespace

LineRule parse_rule(const std::string& text) {
  LineRule rule;
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument(fmt::format("rule '{}' has no ':' (expected 'line N: RULE')", text));
  parse_target(text.substr(0, colon), rule);
  std::string body = text.substr(colon + 1);
  // The reason follows an em dash or " -- ".
  for (const std::string sep : {"\xE2\x80\x94", " -- "}) {
    const auto at = body.find(sep);
    if (at != std::string::npos) {
      rule.reason = body.substr(at + sep.size());
      body.resize(at);
      break;
    }
  }
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
  };
  rule.reason = trim(rule.reason);
  rule.text = trim(body);
  std::vector<std::string> words;
  for (std::size_t i = 0; i < rule.text.size();) {
    const auto b = rule.text.find_first_not_of(" \t", i);
    if (b == std::string::npos) break;
    const auto e = rule.text.find_first_of(" \t", b);
    words.push_back(rule.text.substr(b, e == std::string::npos ? std::string::npos : e - b));
    i = e == std::string::npos ? rule.text.size() : e;
  }
  if (words.empty()) throw std::invalid_argument("rule has no kind after ':'");
  const std::string& kind = words[0];
  if (kind == "exact" || kind == "ws" || kind == "machine") {
    if (words.size() != 1) throw std::invalid_argument(fmt::format("rule '{}' takes no value", kind));
    rule.kind = kind == "exact" ? RuleKind::exact : kind == "ws" ? RuleKind::ws : RuleKind::machine;
    if (rule.kind == RuleKind::ws && rule.number)
      throw std::invalid_argument("rule 'ws' applies to a whole line, not to one number");
  } else if (kind == "bound") {
    if (words.size() != 2) throw std::invalid_argument("rule 'bound' takes one value: 'bound X' or 'bound derived'");
    rule.kind = RuleKind::bound;
    if (words[1] == "derived") rule.derived = true;
    else rule.bound = parse_number(words[1], "bound");
  } else if (kind == "abs" || kind == "rel") {
    rule.kind = RuleKind::numeric;
    if (words.size() != 2 && words.size() != 4)
      throw std::invalid_argument("numeric rule is 'abs A', 'rel R' or 'abs A rel R'");
    for (std::size_t i = 0; i < words.size(); i += 2) {
      if (words[i] == "abs") rule.abs_tol = parse_number(words[i + 1], "abs tolerance");
      else if (words[i] == "rel") rule.rel_tol = parse_number(words[i + 1], "rel tolerance");
      else throw std::invalid_argument(fmt::format("unknown word '{}' in numeric rule", words[i]));
    }
  } else {
    throw std::invalid_argument(
        fmt::format("unknown rule '{}' (known: exact, ws, abs, rel, bound, machine)", kind));
  }
  return rule;
}

namespace {

// A line split into text and numbers: text[0] num[0] text[1] num[1] ... text[n].
struct Tokens {
  std::vector<std::string> text;
  std::vector<std::string> numbers;
};

Tokens tokenize(const std::string& line) {
  static const std::regex number(R"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)");
  Tokens t;
  std::string pending;
  auto begin = std::sregex_iterator(line.begin(), line.end(), number);
  std::size_t pos = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    std::size_t at = std::size_t(it->position());
    std::string tok = it->str();
    // A sign glued to a word ("n-1", "x+2") is text, not part of the number.
    if ((tok[0] == '-' || tok[0] == '+') && at > 0 && std::isalnum(static_cast<unsigned char>(line[at - 1]))) {
      ++at;
      tok = tok.substr(1);
    }
    // Digits inside an identifier ("d_k2", "R_5" stays a number after '_').
    if (at > 0 && std::isalpha(static_cast<unsigned char>(line[at - 1]))) continue;
    t.text.push_back(line.substr(pos, at - pos));
    t.numbers.push_back(tok);
    pos = at + tok.size();
  }
  t.text.push_back(line.substr(pos));
  return t;
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

// Same form: same count of decimals, same exponent style (for machine-dependent numbers).
bool same_form(const std::string& a, const std::string& b) {
  auto form = [](const std::string& s) {
    std::string f;
    for (char c : s) f.push_back(std::isdigit(static_cast<unsigned char>(c)) ? 'd' : c);
    const auto dot = f.find('.');
    const auto exp = f.find_first_of("eE");
    std::string frac = dot == std::string::npos ? "" : f.substr(dot, exp == std::string::npos ? std::string::npos : exp - dot);
    return frac + (exp == std::string::npos ? "" : "e");
  };
  return form(a) == form(b);
}

}  // namespace

std::vector<LineVerdict> compare_output(const std::vector<std::string>& documented,
                                        const std::vector<std::string>& produced,
                                        const std::vector<LineRule>& rules,
                                        const std::map<int, double>& derived) {
  std::vector<LineVerdict> verdicts;
  const std::size_t lines = std::max(documented.size(), produced.size());
  for (std::size_t i = 0; i < lines; ++i) {
    LineVerdict v;
    v.line = int(i) + 1;
    std::vector<const LineRule*> applied;
    for (const auto& r : rules)
      if (r.covers(v.line) && r.kind != RuleKind::exact) applied.push_back(&r);
    std::vector<std::string> names;
    for (const auto* r : applied) names.push_back(r->number ? fmt::format("{} (number {})", r->text, *r->number) : r->text);
    v.rule = names.empty() ? "exact" : fmt::format("{}", fmt::join(names, "; "));
    if (i >= documented.size()) {
      v.produced = produced[i];
      v.detail = "extra line: the lesson documents no such line";
      verdicts.push_back(v);
      continue;
    }
    v.documented = documented[i];
    if (i >= produced.size()) {
      v.detail = "missing line: the listing printed nothing here";
      verdicts.push_back(v);
      continue;
    }
    v.produced = produced[i];
    if (applied.empty()) {
      v.passed = v.documented == v.produced;
      if (!v.passed) {
        std::size_t at = 0;
        while (at < v.documented.size() && at < v.produced.size() && v.documented[at] == v.produced[at]) ++at;
        v.detail = fmt::format("text differs from column {}", at + 1);
      }
      verdicts.push_back(v);
      continue;
    }
    const bool ws = std::any_of(applied.begin(), applied.end(), [](auto* r) { return r->kind == RuleKind::ws; });
    const Tokens d = tokenize(v.documented), p = tokenize(v.produced);
    if (d.numbers.size() != p.numbers.size()) {
      v.detail = fmt::format("{} numbers documented, {} produced", d.numbers.size(), p.numbers.size());
      verdicts.push_back(v);
      continue;
    }
    v.passed = true;
    for (std::size_t k = 0; k < d.text.size() && v.passed; ++k) {
      const bool same = ws ? collapse_spaces(d.text[k]) == collapse_spaces(p.text[k]) : d.text[k] == p.text[k];
      if (!same) {
        v.passed = false;
        v.detail = fmt::format("text differs: '{}' documented, '{}' produced", d.text[k], p.text[k]);
      }
    }
    for (std::size_t k = 0; k < d.numbers.size() && v.passed; ++k) {
      const LineRule* rule = nullptr;
      for (const auto* r : applied)
        if (r->kind != RuleKind::ws && (!r->number || *r->number == int(k) + 1)) rule = r;
      const std::string& dn = d.numbers[k];
      const std::string& pn = p.numbers[k];
      if (!rule) {
        if (dn != pn) {
          v.passed = false;
          v.detail = fmt::format("number {}: '{}' documented, '{}' produced (exact)", k + 1, dn, pn);
        }
        continue;
      }
      // strtod, not stod: a number too large or too small for a double ("1e999", "1e-400") is
      // ±inf or a denormal/0 here, judged like any other, where stod would throw out_of_range.
      const double dv = std::strtod(dn.c_str(), nullptr), pv = std::strtod(pn.c_str(), nullptr);
      // The same digits are no error (inf − inf would be NaN, failing "1e999" against itself).
      const double abs_err = dn == pn ? 0.0 : std::fabs(dv - pv);
      const double rel_err = dv != 0 ? abs_err / std::fabs(dv) : (abs_err == 0 ? 0 : INFINITY);
      switch (rule->kind) {
        case RuleKind::numeric:
          v.abs_error = abs_err;
          v.rel_error = rel_err;
          if (!(abs_err <= rule->abs_tol || rel_err <= rule->rel_tol)) {
            v.passed = false;
            v.detail = fmt::format("number {}: {} documented, {} produced: abs error {:.3g} > {:.3g}, rel error {:.3g} > {:.3g}",
                                   k + 1, dn, pn, abs_err, rule->abs_tol, rel_err, rule->rel_tol);
          }
          break;
        case RuleKind::bound: {
          const auto given = derived.find(v.line);
          if (rule->derived && given == derived.end()) {
            v.passed = false;
            v.detail = fmt::format("number {}: the listing derives no bound for line {} (rule 'bound derived')", k + 1, v.line);
            break;
          }
          const double bound = rule->derived ? given->second : rule->bound;
          v.bound = bound;
          // A derived bound that is not a finite positive number judges nothing: the line fails.
          if (!(bound > 0) || !std::isfinite(bound) || !(std::fabs(pv) < bound)) {
            v.passed = false;
            v.detail = fmt::format("number {}: produced {} is not below the {}bound {:.3g}", k + 1, pn, rule->derived ? "derived " : "",
                                   bound);
          }
          break;
        }
        case RuleKind::machine:
          if (!same_form(dn, pn)) {
            v.passed = false;
            v.detail = fmt::format("number {}: '{}' does not have the form of '{}'", k + 1, pn, dn);
          }
          break;
        default: break;
      }
    }
    verdicts.push_back(v);
  }
  return verdicts;
}

}  // namespace vl
