// Parsing specs/<lesson>.md (format: specs/README.md). Every error names file:line.
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

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
    while (i < lines_.size()) {
      const std::string& l = lines_[i];
      if (l.rfind("```", 0) == 0) {
        i = block(i);
      } else {
        ++i;
      }
    }
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

  // --- fenced blocks; returns the index after the closing fence
  std::size_t block(std::size_t open) {
    const std::string info = trim(lines_[open].substr(3));
    std::size_t close = open + 1;
    while (close < lines_.size() && lines_[close].rfind("```", 0) != 0) ++close;
    if (close >= lines_.size()) fail(open, fmt::format("block '```{}' is not closed by a line '```'", info));
    if (trim(lines_[close]) != "```") fail(close, "a closing fence is a line '```' alone");
    const std::vector<std::string> body(lines_.begin() + open + 1, lines_.begin() + close);
    const std::string kind = info.substr(0, info.find(' '));
    const std::string arg = info.find(' ') == std::string::npos ? "" : trim(info.substr(info.find(' ') + 1));
    if (kind == "claim") claim(open, body);
    else if (kind == "listing") listing(open, body);
    else if (kind == "output") output(open, arg, body);
    else if (kind == "rules") rules(open, arg, body);
    else if (kind == "claims" || kind == "listings" || kind == "outputs" || kind == "rule")
      fail(open, fmt::format("unknown block kind '{}' (known: claim, listing, output, rules)", kind));
    return close + 1;
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
    for (const auto& [key, v] : fields(open, body, {"id", "kind", "tolerance", "statement", "source"})) {
      const auto& [value, index] = v;
      if (key == "id") c.id = value;
      else if (key == "statement") c.statement = value;
      else if (key == "source") c.source = value;
      else if (key == "kind") {
        static const std::map<std::string, ClaimKind> kinds{{"identity", ClaimKind::identity},
            {"invariant", ClaimKind::invariant}, {"bound", ClaimKind::bound},
            {"statistical", ClaimKind::statistical}, {"complexity", ClaimKind::complexity}};
        const auto it = kinds.find(value);
        if (it == kinds.end())
          fail(index, fmt::format("unknown claim kind '{}' (known: identity, invariant, bound, statistical, complexity)", value));
        c.kind = it->second;
      } else if (key == "tolerance") {
        c.tolerance_text = value;
        if (value != "none") {
          std::size_t used = 0;
          double t = -1;
          try { t = std::stod(value, &used); } catch (const std::exception&) { used = 0; }
          if (used != value.size() || !(t >= 0))
            fail(index, fmt::format("tolerance '{}' is not a non-negative number or 'none'", value));
          c.tolerance = t;
        }
      }
    }
    require_id(open, c.id, "claim");
    if (c.tolerance_text.empty()) fail(open, fmt::format("claim '{}' has no 'tolerance:' (a number, 0 for bit-identical, or none)", c.id));
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

  void rules(std::size_t open, const std::string& listing, const std::vector<std::string>& body) {
    OutputSpec* o = nullptr;
    for (auto& out : spec_.outputs)
      if (out.listing == listing) o = &out;
    if (!o) fail(open, fmt::format("rules block for '{}' comes before (or without) its output block", listing));
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
};

}  // namespace

Spec parse_spec(const std::filesystem::path& file) { return Parser(file).parse(); }

}  // namespace vl
