// Parsing specs/<lesson>.md (format: specs/README.md). Every error names file:line.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "engine/spec.hpp"

namespace vl {

std::string SpecLocation::str() const { return fmt::format("{}:{}", file.string(), line); }

std::string to_string(ClaimKind kind) {
  switch (kind) {
    case ClaimKind::identity: return "identity";
    case ClaimKind::invariant: return "invariant";
    case ClaimKind::bound: return "bound";
    case ClaimKind::statistical: return "statistical";
    case ClaimKind::complexity: return "complexity";
  }
  return "?";
}

std::string to_string(ClaimSubject subject) {
  switch (subject) {
    case ClaimSubject::computation: return "computation";
    case ClaimSubject::our_code: return "our-code";
  }
  return "?";
}

std::string to_string(Comparison c) {
  switch (c) {
    case Comparison::at_most: return "<=";
    case Comparison::below: return "<";
    case Comparison::at_least: return ">=";
    case Comparison::above: return ">";
    case Comparison::equal: return "==";
  }
  return "?";
}

std::optional<PrecisionTolerance> Claim::tolerance_in(Precision p) const {
  if (p != Precision::float64) {
    if (const auto it = in_precision.find(p); it != in_precision.end()) return it->second;
    if (tolerance && *tolerance != 0) return std::nullopt;
  }
  return PrecisionTolerance{tolerance, tolerance_text, "", where.line};
}

Claim Claim::in(Precision p) const {
  Claim c = *this;
  if (const auto t = tolerance_in(p); t && t->not_applicable.empty()) {
    c.tolerance = t->tolerance;
    c.tolerance_text = t->tolerance_text;
  }
  if (const auto m = measure_in.find(p); m != measure_in.end()) c.measure = m->second;
  return c;
}

std::string Claim::stated_bound() const {
  return compare ? fmt::format("{} {}", to_string(*compare), tolerance_text) : tolerance_text;
}

std::string to_string(BlockKind kind) {
  switch (kind) {
    case BlockKind::prose: return "prose";
    case BlockKind::claim: return "claim";
    case BlockKind::listing: return "listing";
    case BlockKind::output: return "output";
    case BlockKind::rules: return "rules";
  }
  return "?";
}

const Claim* Spec::find_claim(const std::string& id) const {
  for (const auto& c : claims)
    if (c.id == id) return &c;
  return nullptr;
}

const OutputSpec* Spec::find_output(const std::string& listing) const {
  for (const auto& o : outputs)
    if (o.listing == listing) return &o;
  return nullptr;
}

const std::vector<std::string>& known_terms() {
  static const std::vector<std::string> terms{"bias",  "mask",   "scale",   "heads",   "gqa",     "chunk-remainder", "kv-cache",
                                              "window", "softcap", "padding", "batch", "float16", "float32",         "float64"};
  return terms;
}

std::string listing_name(const std::string& listing_id) {
  const auto dot = listing_id.find('.');
  return dot == std::string::npos ? listing_id : listing_id.substr(dot + 1);
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "terms: a, b, c; gaps: d (why), e (why)" or "terms: none; gaps: ...". Each term must be a
// known one (a typo would otherwise read as a term covered), none given twice.
void parse_terms(const std::string& value, Claim& c) {
  const auto& known = known_terms();
  auto check = [&](const std::string& term, const std::vector<std::string>& seen) {
    if (std::find(known.begin(), known.end(), term) == known.end())
      throw std::invalid_argument(fmt::format("unknown term '{}' (known: {})", term, fmt::join(known, ", ")));
    if (std::find(seen.begin(), seen.end(), term) != seen.end())
      throw std::invalid_argument(fmt::format("term '{}' given twice", term));
  };
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t depth = 0, from = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
      if (i < s.size() && s[i] == '(') ++depth;
      if (i < s.size() && s[i] == ')' && depth > 0) --depth;
      if (i == s.size() || (s[i] == ',' && depth == 0)) {
        out.push_back(trim(s.substr(from, i - from)));
        from = i + 1;
      }
    }
    return out;
  };
  const auto semi = value.find(';');
  const std::string covered = trim(value.substr(0, semi));
  std::vector<std::string> seen;
  c.terms_given = true;
  if (covered != "none")
    for (const auto& t : split(covered)) {
      check(t, seen);
      seen.push_back(t);
      c.terms.push_back(t);
    }
  if (semi == std::string::npos) return;
  const std::string rest = trim(value.substr(semi + 1));
  if (rest.rfind("gaps:", 0) != 0) throw std::invalid_argument("after ';' the terms line takes 'gaps: TERM (why), ...'");
  for (const auto& g : split(trim(rest.substr(5)))) {
    const auto paren = g.find('(');
    TermGap gap{trim(g.substr(0, paren)), ""};
    if (paren != std::string::npos) {
      if (g.back() != ')') throw std::invalid_argument(fmt::format("gap '{}': the note in parentheses is not closed", g));
      gap.note = trim(g.substr(paren + 1, g.size() - paren - 2));
    }
    check(gap.term, seen);
    seen.push_back(gap.term);
    c.term_gaps.push_back(gap);
  }
}

// A line that Markdown (CommonMark) reads as a code fence, wherever it stands: its indentation
// in columns (a tab reaches the next multiple of 4), what it is nested in (list items, block
// quotes), its marker and the first word of its info string.
struct Fence {
  std::size_t indent = 0;
  bool nested = false;     // after a list marker ('- ', '1. ') or a block quote's '>'
  char marker = '`';
  std::size_t length = 0;  // how many markers: three or more
  std::string word;        // the info string's first word: "claim", "output", "python", ""
};

std::optional<Fence> markdown_fence(const std::string& line) {
  Fence f;
  std::size_t i = 0;
  for (;; f.nested = true) {  // skip indentation, then any container markers and theirs
    for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i)
      f.indent = line[i] == '\t' ? (f.indent / 4 + 1) * 4 : f.indent + 1;
    std::size_t m = i;
    if (m < line.size() && line[m] == '>') {
      ++m;
    } else if (m < line.size() && (line[m] == '-' || line[m] == '+' || line[m] == '*')) {
      ++m;
      if (m >= line.size() || line[m] != ' ') break;
    } else {
      while (m < line.size() && std::isdigit(static_cast<unsigned char>(line[m]))) ++m;
      if (m == i || m >= line.size() || (line[m] != '.' && line[m] != ')') || m + 1 >= line.size() || line[m + 1] != ' ')
        break;
      ++m;
    }
    i = m;
  }
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
  f.marker = line[i];
  while (i + f.length < line.size() && line[i + f.length] == f.marker) ++f.length;
  if (f.length < 3) return std::nullopt;
  const std::string info = trim(line.substr(i + f.length));
  if (f.marker == '`' && info.find('`') != std::string::npos) return std::nullopt;  // inline code
  f.word = info.substr(0, info.find_first_of(" \t"));
  return f;
}

bool is_engine_word(const std::string& word) {
  return word == "claim" || word == "listing" || word == "output" || word == "rules";
}

class Parser {
 public:
  explicit Parser(std::filesystem::path file) : file_(std::move(file)) {}

  Spec parse() {
    std::ifstream in(file_);
    if (!in) throw InputError(fmt::format("{}: cannot open spec file", file_.string()));
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines_.push_back(line);
    }
    spec_.file = file_;
    std::ostringstream all;
    for (const auto& l : lines_) all << l << '\n';
    spec_.markdown = all.str();

    std::size_t i = front_matter();
    prose_from_ = i;
    while (i < lines_.size()) {
      const std::string& l = lines_[i];
      if (l.rfind("```", 0) == 0) {
        i = block(i);
      } else {
        refuse_unread_fence(i);
        ++i;
      }
    }
    add_prose(lines_.size());
    cross_check();
    return spec_;
  }

 private:
  [[noreturn]] void fail(std::size_t index, const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}", file_.string(), index + 1, what));
  }
  SpecLocation at(std::size_t index) const { return {file_, int(index) + 1}; }

  // libstdc++'s std::regex recurses once per character: a value of ~100k characters overflows
  // the stack. Ids, array lines and rules are short; longer ones are refused before matching.
  static constexpr std::size_t kMaxMatched = 1000;
  void short_enough(std::size_t index, const std::string& text, const char* what) const {
    if (text.size() > kMaxMatched)
      fail(index, fmt::format("{} is {} characters long (at most {})", what, text.size(), kMaxMatched));
  }

  // --- front matter: '---', 'key: value' lines, '  - item' list entries, '---'
  std::size_t front_matter() {
    if (lines_.empty() || lines_[0] != "---") fail(0, "a spec starts with front matter: a line '---'");
    std::string list_key;
    std::size_t i = 1;
    for (; i < lines_.size() && lines_[i] != "---"; ++i) {
      const std::string& l = lines_[i];
      if (trim(l).empty()) continue;
      if (l.rfind("  - ", 0) == 0) {
        if (list_key != "sources") fail(i, "a list item '- ...' belongs under 'sources:'");
        spec_.sources.push_back(trim(l.substr(4)));
        continue;
      }
      const auto colon = l.find(':');
      if (colon == std::string::npos || l[0] == ' ') fail(i, "front matter line is not 'key: value'");
      const std::string key = trim(l.substr(0, colon)), value = trim(l.substr(colon + 1));
      list_key.clear();
      if (key == "lesson") {
        static const std::regex id(R"(^[a-z][a-z0-9-]*$)");
        short_enough(i, value, "lesson id");
        if (!std::regex_match(value, id)) fail(i, fmt::format("lesson id '{}' is not lower-case-with-dashes", value));
        spec_.lesson = value;
      } else if (key == "title") {
        spec_.title = value;
      } else if (key == "sources") {
        if (!value.empty()) fail(i, "'sources:' takes a list of '  - source' lines below it");
        list_key = key;
      } else {
        fail(i, fmt::format("unknown front matter key '{}' (known: lesson, title, sources)", key));
      }
    }
    if (i >= lines_.size()) fail(0, "front matter is not closed by a line '---'");
    if (spec_.lesson.empty()) fail(0, "front matter has no 'lesson:' id");
    if (spec_.title.empty()) fail(0, "front matter has no 'title:'");
    if (spec_.sources.empty()) fail(0, "front matter lists no 'sources:'");
    return i + 1;
  }

  // --- fences the engine does not read. The engine reads a block only from a fence of exactly
  // three backticks at the start of a line. Outside its blocks, a line that Markdown reads as a
  // fence of another form is refused when a renderer could show it as a block the engine never
  // audits: any '~~~' fence (its body could hold a '```claim' line that Markdown shows as code
  // and the engine reads), any fence indented by 1-3 spaces (the same), and a fence indented by
  // 4+ columns or nested in a list item or block quote whose info string is an engine word.
  void refuse_unread_fence(std::size_t index) const {
    const auto f = markdown_fence(lines_[index]);
    if (!f) return;
    const std::string written = trim(lines_[index]);
    if (f->marker == '~' && !f->nested && f->indent < 4)
      fail(index, fmt::format("'{}': the engine reads only fences of three backticks; write '```{}'"
                              " at the start of the line (its closing fence '```')", written, f->word));
    if (!f->nested && f->indent >= 1 && f->indent <= 3)
      fail(index, fmt::format("fence '{}' is indented by {} space(s): Markdown shows it as a fenced block, the engine"
                              " does not read it; write it at the start of the line", written, f->indent));
    if (is_engine_word(f->word))
      fail(index, fmt::format("fence '{}' {}: Markdown may show it as a {} block, but the engine reads blocks only"
                              " from '```{}' at the start of a line, outside lists and quotes; move it there (or, for an"
                              " example, give it another info string)",
                              written, f->nested ? "is inside a list item or block quote" : "is indented by 4 or more columns",
                              f->word, f->word));
  }

  // --- fenced blocks; returns the index after the closing fence
  std::size_t block(std::size_t open) {
    const std::string info = trim(lines_[open].substr(3));
    if (info.rfind('`', 0) == 0)
      fail(open, "the engine's fences are exactly three backticks: write '```' and the info string, then a line '```'");
    std::size_t close = open + 1;
    while (close < lines_.size() && lines_[close].rfind("```", 0) != 0) {
      refuse_indented_close(close);
      ++close;
    }
    if (close >= lines_.size()) fail(open, fmt::format("block '```{}' is not closed by a line '```'", info));
    if (trim(lines_[close]) != "```") fail(close, "a closing fence is a line '```' alone");
    const std::vector<std::string> body(lines_.begin() + open + 1, lines_.begin() + close);
    const std::string kind = info.substr(0, info.find(' '));
    const std::string arg = info.find(' ') == std::string::npos ? "" : trim(info.substr(info.find(' ') + 1));
    SpecBlock b;
    if (kind == "claim") {
      claim(open, body);
      b.kind = BlockKind::claim;
      b.index = spec_.claims.size() - 1;
    } else if (kind == "listing") {
      listing(open, body);
      b.kind = BlockKind::listing;
      b.index = spec_.listings.size() - 1;
    } else if (kind == "output") {
      output(open, arg, body);
      b.kind = BlockKind::output;
      b.index = spec_.outputs.size() - 1;
    } else if (kind == "rules") {
      b.kind = BlockKind::rules;
      rules(open, arg, body, b);
    } else if (kind == "claims" || kind == "listings" || kind == "outputs" || kind == "rule") {
      fail(open, fmt::format("unknown block kind '{}' (known: claim, listing, output, rules)", kind));
    } else {
      return close + 1;  // any other fenced block (code, formulas) is prose
    }
    add_prose(open);
    b.first_line = int(open) + 1;
    b.last_line = int(close) + 1;
    b.text = text_of(open, close + 1);
    spec_.blocks.push_back(std::move(b));
    prose_from_ = close + 1;
    return close + 1;
  }

  // Inside a block, a fence of backticks indented by 1-3 spaces ends the block for Markdown but
  // not for the engine, which would read on into what the page shows as prose.
  void refuse_indented_close(std::size_t index) const {
    const auto f = markdown_fence(lines_[index]);
    if (f && f->marker == '`' && !f->nested && f->indent >= 1 && f->indent <= 3 && trim(lines_[index]) == std::string(f->length, '`'))
      fail(index, fmt::format("'{}' indented by {} space(s) ends the block for Markdown but not for the engine;"
                              " write the closing fence '```' at the start of the line", trim(lines_[index]), f->indent));
  }

  // The lines [from, to) as written, each ending in '\n'.
  std::string text_of(std::size_t from, std::size_t to) const {
    std::string text;
    for (std::size_t k = from; k < to; ++k) text += lines_[k] + '\n';
    return text;
  }

  // The prose since the last engine block, up to the line `to` (exclusive), unless it is blank.
  void add_prose(std::size_t to) {
    bool blank = true;
    for (std::size_t k = prose_from_; k < to; ++k) blank = blank && trim(lines_[k]).empty();
    if (blank) return;
    SpecBlock b;
    b.first_line = int(prose_from_) + 1;
    b.last_line = int(to);
    b.text = text_of(prose_from_, to);
    spec_.blocks.push_back(std::move(b));
  }

  // 'key: value' fields; a line indented by two spaces continues the previous value.
  std::vector<std::pair<std::string, std::pair<std::string, std::size_t>>> fields(
      std::size_t open, const std::vector<std::string>& body, const std::set<std::string>& known) {
    std::vector<std::pair<std::string, std::pair<std::string, std::size_t>>> out;
    for (std::size_t k = 0; k < body.size(); ++k) {
      const std::string& l = body[k];
      const std::size_t index = open + 1 + k;
      if (trim(l).empty()) continue;
      if (l.rfind("  ", 0) == 0 && !out.empty()) {
        out.back().second.first += " " + trim(l);
        continue;
      }
      const auto colon = l.find(':');
      if (colon == std::string::npos) fail(index, "field line is not 'key: value'");
      const std::string key = trim(l.substr(0, colon));
      if (!known.count(key))
        fail(index, fmt::format("unknown field '{}' (known: {})", key, fmt::join(known, ", ")));
      for (const auto& f : out)
        if (f.first == key && key != "array") fail(index, fmt::format("field '{}' given twice", key));
      out.push_back({key, {trim(l.substr(colon + 1)), index}});
    }
    return out;
  }

  void claim(std::size_t open, const std::vector<std::string>& body) {
    Claim c;
    c.where = at(open);
    std::size_t compare_line = open;
    for (const auto& [key, v] :
         fields(open, body, {"id", "kind", "tolerance", "tolerance-float32", "tolerance-bfloat16", "tolerance-float16", "compare",
                             "statement", "source", "measure", "measure-float32", "measure-bfloat16", "measure-float16", "unit",
                             "refutes", "subject", "terms"})) {
      const auto& [value, index] = v;
      if (key == "id") c.id = value;
      else if (key.rfind("tolerance-", 0) == 0) {
        PrecisionTolerance t;
        t.line = int(index) + 1;
        t.tolerance_text = value;
        if (value.rfind("n/a:", 0) == 0) {
          t.not_applicable = trim(value.substr(4));
          if (t.not_applicable.empty()) fail(index, fmt::format("'{}: n/a:' gives no reason", key));
        } else {
          std::size_t used = 0;
          double x = -1;
          try { x = std::stod(value, &used); } catch (const std::exception&) { used = 0; }
          if (used != value.size() || !(x >= 0) || !std::isfinite(x))
            fail(index, fmt::format("{} '{}' is not a non-negative number or 'n/a: <reason>'", key, value));
          t.tolerance = x;
        }
        c.in_precision[*precision_named(key.substr(10))] = t;
      }
      else if (key == "statement") c.statement = value;
      else if (key == "source") c.source = value;
      else if (key == "refutes") c.refutes = value;
      else if (key == "measure") c.measure = value;
      else if (key.rfind("measure-", 0) == 0) c.measure_in[*precision_named(key.substr(8))] = value;
      else if (key == "unit") c.unit = value;
      else if (key == "kind") {
        static const std::map<std::string, ClaimKind> kinds{{"identity", ClaimKind::identity},
            {"invariant", ClaimKind::invariant}, {"bound", ClaimKind::bound},
            {"statistical", ClaimKind::statistical}, {"complexity", ClaimKind::complexity}};
        const auto it = kinds.find(value);
        if (it == kinds.end())
          fail(index, fmt::format("unknown claim kind '{}' (known: identity, invariant, bound, statistical, complexity)", value));
        c.kind = it->second;
      } else if (key == "subject") {
        if (value == "computation") c.subject = ClaimSubject::computation;
        else if (value == "our-code") c.subject = ClaimSubject::our_code;
        else fail(index, fmt::format("unknown claim subject '{}' (known: computation, our-code)", value));
      } else if (key == "terms") {
        try {
          parse_terms(value, c);
        } catch (const std::invalid_argument& e) {
          fail(index, e.what());
        }
      } else if (key == "tolerance") {
        c.tolerance_text = value;
        if (value != "none") {
          std::size_t used = 0;
          double t = -1;
          try { t = std::stod(value, &used); } catch (const std::exception&) { used = 0; }
          if (used != value.size() || !(t >= 0) || !std::isfinite(t))  // inf: a check that cannot fail
            fail(index, fmt::format("tolerance '{}' is not a non-negative number or 'none' (a finite one)", value));
          c.tolerance = t;
        }
      } else if (key == "compare") {
        static const std::map<std::string, Comparison> comparisons{{"<=", Comparison::at_most}, {"<", Comparison::below},
            {">=", Comparison::at_least}, {">", Comparison::above}, {"==", Comparison::equal}};
        const auto it = comparisons.find(value);
        if (it == comparisons.end())
          fail(index, fmt::format("unknown comparison '{}' (known: <=, <, >=, >, ==)", value));
        c.compare = it->second;
        compare_line = index;
      }
    }
    require_id(open, c.id, "claim");
    if (c.tolerance_text.empty()) fail(open, fmt::format("claim '{}' has no 'tolerance:' (a number, 0 for bit-identical, or none)", c.id));
    if (c.tolerance && !c.compare)
      fail(open, fmt::format("claim '{}' has a tolerance but no 'compare:' (<=, <, >=, > or ==: how its measured value must "
                             "stand to {})", c.id, c.tolerance_text));
    if (!c.tolerance && !c.in_precision.empty())
      fail(open, fmt::format("claim '{}' has 'tolerance: none' and a tolerance per precision: a pass/fail property holds or "
                             "fails alike in every precision", c.id));
    if (!c.tolerance && c.compare)
      fail(compare_line, fmt::format("claim '{}' has 'tolerance: none' and a 'compare:': a pass/fail property has no number to "
                                     "compare with", c.id));
    if (c.statement.empty()) fail(open, fmt::format("claim '{}' has no 'statement:'", c.id));
    if (c.source.empty()) fail(open, fmt::format("claim '{}' has no 'source:'", c.id));
    if (const Claim* prev = spec_.find_claim(c.id))
      fail(open, fmt::format("duplicate claim id '{}' (first at line {})", c.id, prev->where.line));
    spec_.claims.push_back(c);
  }

  void listing(std::size_t open, const std::vector<std::string>& body) {
    ListingSpec l;
    l.where = at(open);
    for (const auto& [key, v] : fields(open, body, {"id", "function", "parameters", "source", "array"})) {
      const auto& [value, index] = v;
      if (key == "id") l.id = value;
      else if (key == "function") l.function = value;
      else if (key == "parameters") l.parameters = value;
      else if (key == "source") l.source = value;
      else if (key == "array") {
        // array: NAME = lesson/file.npy, abs 1e-12
        static const std::regex form(R"(^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S+\.npy)\s*,\s*abs\s+(\S+)$)");
        std::smatch m;
        short_enough(index, value, "array line");
        if (!std::regex_match(value, m, form))
          fail(index, fmt::format("array '{}' is not 'NAME = LESSON/FILE.npy, abs TOL'", value));
        std::size_t used = 0;
        double tol = -1;
        try { tol = std::stod(m[3].str(), &used); } catch (const std::exception&) { used = 0; }
        if (used != m[3].str().size() || !std::isfinite(tol) || tol < 0)
          fail(index, fmt::format("array '{}': tolerance '{}' is not a non-negative number", value, m[3].str()));
        l.arrays.push_back({m[1], m[2], tol});
      }
    }
    require_id(open, l.id, "listing");
    if (l.function.empty()) fail(open, fmt::format("listing '{}' has no 'function:'", l.id));
    for (const auto& prev : spec_.listings)
      if (prev.id == l.id) fail(open, fmt::format("duplicate listing id '{}' (first at line {})", l.id, prev.where.line));
    spec_.listings.push_back(l);
  }

  void output(std::size_t open, const std::string& listing, const std::vector<std::string>& body) {
    if (listing.empty()) fail(open, "an output block names its listing: '```output LISTING-ID'");
    if (spec_.find_output(listing)) fail(open, fmt::format("second output block for listing '{}'", listing));
    // The audit scans every documented line for numbers with std::regex, whose recursion
    // overflows the stack on a run of ~20k digits; no lesson prints lines near this long.
    for (std::size_t k = 0; k < body.size(); ++k)
      if (body[k].size() > 2000)
        fail(open + 1 + k, fmt::format("output line is {} characters long (at most 2000)", body[k].size()));
    OutputSpec o;
    o.listing = listing;
    o.lines = body;
    o.where = at(open);
    o.golden = fmt::format("{}/{}.txt", spec_.lesson, listing_name(listing));
    spec_.outputs.push_back(o);
  }

  // Adds the block's rules to its output; `block` records which they are and their lines.
  void rules(std::size_t open, const std::string& listing, const std::vector<std::string>& body, SpecBlock& block) {
    OutputSpec* o = nullptr;
    for (auto& out : spec_.outputs)
      if (out.listing == listing) o = &out;
    if (!o) fail(open, fmt::format("rules block for '{}' comes before (or without) its output block", listing));
    block.index = std::size_t(o - spec_.outputs.data());
    block.first_rule = o->rules.size();
    for (std::size_t k = 0; k < body.size(); ++k) {
      if (trim(body[k]).empty()) continue;
      try {
        short_enough(open + 1 + k, body[k], "rule");
        LineRule r = parse_rule(body[k]);
        if (r.last_line > int(o->lines.size()))
          fail(open + 1 + k, fmt::format("rule names line {}, but the output has {} lines", r.last_line, o->lines.size()));
        if (r.kind != RuleKind::exact && r.reason.empty())
          fail(open + 1 + k, "a rule that is not 'exact' says why, after ' — '");
        o->rules.push_back(r);
        block.rule_lines.push_back(int(open + k) + 2);
      } catch (const std::invalid_argument& e) {
        fail(open + 1 + k, e.what());
      } catch (const std::out_of_range&) {
        fail(open + 1 + k, fmt::format("rule '{}': a line or number index is too large", trim(body[k])));
      }
    }
  }

  void require_id(std::size_t open, const std::string& id, const char* what) {
    if (id.empty()) fail(open, fmt::format("{} block has no 'id:'", what));
    static const std::regex form(R"(^[a-z][a-z0-9-]*\.[a-z0-9][a-z0-9.-]*$)");
    short_enough(open, id, "id");
    if (!std::regex_match(id, form))
      fail(open, fmt::format("{} id '{}' is not 'lesson.name' in lower case", what, id));
    if (id.substr(0, id.find('.')) != spec_.lesson)
      fail(open, fmt::format("{} id '{}' does not start with the lesson id '{}.'", what, id, spec_.lesson));
  }

  void cross_check() const {
    for (const auto& o : spec_.outputs) {
      bool known = false;
      for (const auto& l : spec_.listings) known = known || l.id == o.listing;
      if (!known) fail(std::size_t(o.where.line - 1), fmt::format("output block for unknown listing '{}'", o.listing));
    }
    if (spec_.claims.empty()) fail(0, "the spec states no claim");
  }

  std::filesystem::path file_;
  std::vector<std::string> lines_;
  Spec spec_;
  std::size_t prose_from_ = 0;  // the first line of the prose since the last engine block
};

}  // namespace

Spec parse_spec(const std::filesystem::path& file) { return Parser(file).parse(); }

}  // namespace vl
