// Python / NumPy printing (see numpy_format.hpp). The array printer follows NumPy 1.24's
// numpy/core/arrayprint.py: FloatingFormat chooses positional or scientific notation and the
// paddings from all printed values, then _formatArray lays the elements out in nested brackets,
// wrapping rows at 75 columns. Digits come from Dragon4 in NumPy; here from std::to_chars
// (shortest round-trip, the same digits as Dragon4's 'unique' mode) and, when the shortest
// digits exceed the precision, from printf's correctly rounded (ties-to-even) fixed/exponent
// conversion, which is what Dragon4 does at its cutoff.
#include "numeric/numpy_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace vl::numpy {

namespace {

constexpr int kPrecision = 8;        // np.get_printoptions()['precision']
constexpr std::size_t kLineWidth = 75;
constexpr std::size_t kThreshold = 1000;  // more elements than this: summarize with "..."
constexpr std::size_t kEdgeItems = 3;

// A finite value's shortest round-trip decimal: sign, digits d0 d1 ... (no trailing zeros
// except for zero itself, "0"), and the exponent of d0: x = d0.d1d2... * 10^exp10.
struct Decimal {
  bool negative = false;
  std::string digits;
  int exp10 = 0;
};

// Shortest digits via std::to_chars in scientific form ("-d.ddde-XX").
template <class T>
Decimal shortest(T x) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string s(buf, res.ptr);
  Decimal d;
  std::size_t i = 0;
  if (s[i] == '-') {
    d.negative = true;
    ++i;
  }
  const std::size_t e = s.find('e');
  for (; i < e; ++i) {
    if (s[i] != '.') d.digits.push_back(s[i]);
  }
  d.exp10 = std::stoi(s.substr(e + 1));
  return d;
}

// The printed pieces of one finite value: integer part with its sign, fraction digits, and
// (scientific only) the exponent with its sign, e.g. {"-1", "25", "-05"} for -1.25e-05.
struct Pieces {
  std::string int_part;
  std::string frac;
  std::string exp;
};

std::string spaces(std::size_t n) { return std::string(n, ' '); }

// An exponent as Dragon4 and Python print it: sign, then at least `min_digits` digits.
std::string exponent_text(int exp10, std::size_t min_digits) {
  std::string digits = std::to_string(std::abs(exp10));
  std::string out(1, exp10 < 0 ? '-' : '+');
  if (digits.size() < min_digits) out.append(min_digits - digits.size(), '0');
  out.append(digits);
  return out;
}

void strip_trailing_zeros(std::string& s) {
  while (!s.empty() && s.back() == '0') s.pop_back();
}

// dragon4_positional(x, precision=p, unique=True, fractional=True, trim='.'): the shortest
// digits if they need at most p fraction digits, else x correctly rounded to p fraction digits;
// trailing zeros dropped (the '.' is kept by the caller). With `exact_units` (min_digits=0, as
// arrays print) Dragon4 generates digits at least down to the units place, so an integer part
// longer than the shortest digits is printed exactly (float32 81880088, not 81880090).
template <class T>
Pieces positional(T x, int p, bool exact_units) {
  const Decimal d = shortest(x);
  const std::string sign = d.negative ? "-" : "";
  const int n = static_cast<int>(d.digits.size());
  const int frac_digits = std::max(0, n - 1 - d.exp10);
  const bool stops_above_units = d.exp10 - (n - 1) > 0;
  Pieces out;
  if (frac_digits <= p && !(exact_units && stops_above_units)) {
    if (d.exp10 >= 0) {
      std::string int_digits = d.digits.substr(0, std::min(n, d.exp10 + 1));
      int_digits.append(static_cast<std::size_t>(std::max(0, d.exp10 + 1 - n)), '0');
      out.int_part = sign + int_digits;
      out.frac = n > d.exp10 + 1 ? d.digits.substr(static_cast<std::size_t>(d.exp10 + 1)) : "";
    } else {
      out.int_part = sign + "0";
      out.frac = std::string(static_cast<std::size_t>(-d.exp10 - 1), '0') + d.digits;
    }
  } else {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", p, static_cast<double>(x));
    const std::string s(buf);
    const std::size_t dot = s.find('.');
    out.int_part = s.substr(0, dot);
    out.frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  }
  strip_trailing_zeros(out.frac);
  return out;
}

// x correctly rounded (ties to even on the exact binary value) to 1 + p significant digits,
// split into pieces; trailing zeros kept.
template <class T>
Pieces scientific_rounded(T x, int p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", p, static_cast<double>(x));
  const std::string s(buf);
  const std::size_t e = s.find('e');
  const std::size_t dot = s.find('.');
  Pieces out;
  out.int_part = s.substr(0, std::min(dot, e));
  out.frac = dot < e ? s.substr(dot + 1, e - dot - 1) : "";
  out.exp = exponent_text(std::stoi(s.substr(e + 1)), 2);
  return out;
}

// dragon4_scientific(x, precision=p, unique=True, trim='.'): shortest digits if at most p
// follow the first, else correctly rounded to p; exponent with sign and at least 2 digits.
template <class T>
Pieces scientific(T x, int p) {
  const Decimal d = shortest(x);
  if (static_cast<int>(d.digits.size()) - 1 > p) {
    Pieces out = scientific_rounded(x, p);
    strip_trailing_zeros(out.frac);
    return out;
  }
  Pieces out;
  out.int_part = d.negative ? "-" : "";
  out.int_part.push_back(d.digits[0]);
  out.frac = d.digits.substr(1);
  out.exp = exponent_text(d.exp10, 2);
  return out;
}

template <class T>
class FloatingFormat {
 public:
  explicit FloatingFormat(const std::vector<T>& data) {
    std::vector<T> finite;
    bool any_nonfinite = false, negative_inf = false;
    for (T v : data) {
      if (std::isfinite(v)) {
        finite.push_back(v);
      } else {
        any_nonfinite = true;
        if (std::isinf(v) && v < 0) negative_inf = true;
      }
    }
    bool have_nonzero = false;
    T max_val = 0, min_val = 0;
    for (T v : finite) {
      if (v == 0) continue;
      const T m = std::abs(v);
      if (!have_nonzero) {
        max_val = min_val = m;
        have_nonzero = true;
      } else {
        max_val = std::max(max_val, m);
        min_val = std::min(min_val, m);
      }
    }
    if (have_nonzero) {
      const T ratio = max_val / min_val;  // computed in T, as NumPy does (may overflow to inf)
      exp_format_ = max_val >= T(1e8) || min_val < T(0.0001) || ratio > T(1000);
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_format_) {
      std::size_t exp_len = 0;
      for (T v : finite) {
        const Pieces s = scientific(v, kPrecision);
        exp_len = std::max(exp_len, s.exp.size());
        precision_ = std::max(precision_, static_cast<int>(s.frac.size()));
        pad_left_ = std::max(pad_left_, s.int_part.size());
      }
      exp_size_ = exp_len - 1;
      pad_right_ = exp_size_ + 2 + static_cast<std::size_t>(precision_);
    } else {
      for (T v : finite) {
        const Pieces s = positional(v, kPrecision, true);
        pad_left_ = std::max(pad_left_, s.int_part.size());
        pad_right_ = std::max(pad_right_, s.frac.size());
      }
    }
    if (any_nonfinite) {
      // Room for "nan" / "inf" / "-inf" right-aligned in the field.
      const std::size_t offset = pad_right_ + 1;
      const std::size_t inf_len = 3 + (negative_inf ? 1 : 0);
      if (3 > offset) pad_left_ = std::max(pad_left_, 3 - offset);
      if (inf_len > offset) pad_left_ = std::max(pad_left_, inf_len - offset);
    }
  }

  std::string operator()(T x) const {
    if (!std::isfinite(x)) {
      const std::string word = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      const std::size_t width = pad_left_ + pad_right_ + 1;
      return spaces(width > word.size() ? width - word.size() : 0) + word;
    }
    if (exp_format_) {
      // Second pass: unique=True with min_digits = precision. Dragon4 keeps generating exact
      // digits past the shortest ones up to `precision`, so every value ends up correctly
      // rounded to exactly `precision` fraction digits (float32 shows its exact digits here).
      const Pieces s = scientific_rounded(x, precision_);
      std::string out = spaces(pad_left_ - s.int_part.size());
      out.append(s.int_part).append(".").append(s.frac).append("e");
      out.append(exponent_text(std::stoi(s.exp), exp_size_));
      return out;
    }
    const Pieces s = positional(x, kPrecision, true);
    return spaces(pad_left_ - s.int_part.size()) + s.int_part + "." + s.frac +
           spaces(pad_right_ - s.frac.size());
  }

 private:
  bool exp_format_ = false;
  int precision_ = 0;       // scientific: common number of fraction digits
  std::size_t exp_size_ = 0;
  std::size_t pad_left_ = 0;
  std::size_t pad_right_ = 0;
};

// _extendLine: append `word` to the current line, first moving to a new line (starting with
// `indent`) when the line would exceed `width` and a wrap would help.
void extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                 const std::string& indent) {
  bool wrap = line.size() + word.size() > width;
  if (line.size() <= indent.size()) wrap = false;
  if (wrap) {
    std::size_t end = line.find_last_not_of(' ');
    s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
    line = indent;
  }
  line += word;
}

// The array's layout: shape, C-order strides and whether rows/axes are summarized.
template <class T>
struct Layout {
  const T* data;
  std::vector<std::size_t> shape;
  std::vector<std::size_t> strides;
  bool summarize;

  // Indices shown along an axis of length n: all, or the first and last kEdgeItems.
  std::vector<std::size_t> shown(std::size_t n) const {
    std::vector<std::size_t> idx;
    if (summarize && 2 * kEdgeItems < n) {
      for (std::size_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      for (std::size_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  // _leading_trailing: the values that will be printed (they alone set the format).
  void collect(std::size_t offset, std::size_t axis, std::vector<T>& out) const {
    if (axis == shape.size()) {
      out.push_back(data[offset]);
      return;
    }
    for (std::size_t i : shown(shape[axis])) collect(offset + i * strides[axis], axis + 1, out);
  }
};

// _formatArray's recurser: the sub-array at `offset` from `axis` on, as nested brackets.
// Innermost rows wrap at `width` (one less per nesting level, for the closing ']'); outer axes
// put each sub-array on its own line(s), with a blank line per extra dimension.
template <class T>
std::string format_nested(const Layout<T>& a, const FloatingFormat<T>& fmt, std::size_t offset,
                          std::size_t axis, const std::string& indent, std::size_t width) {
  if (axis == a.shape.size()) return fmt(a.data[offset]);
  const std::string next_indent = indent + " ";
  const std::size_t next_width = width - 1;
  const std::size_t n = a.shape[axis];
  const bool summary = a.summarize && 2 * kEdgeItems < n;
  const std::vector<std::size_t> idx = a.shown(n);
  const std::size_t axes_left = a.shape.size() - axis;
  std::string s;
  auto child = [&](std::size_t i) {
    return format_nested(a, fmt, offset + i * a.strides[axis], axis + 1, next_indent, next_width);
  };
  if (axes_left == 1) {
    const std::size_t elem_width = width - 1;
    std::string line = indent;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (summary && k == kEdgeItems) {
        extend_line(s, line, "...", elem_width, indent);
        line += " ";
      }
      extend_line(s, line, child(idx[k]), elem_width, indent);
      if (k + 1 < idx.size()) line += " ";
    }
    s += line;
  } else {
    const std::string line_sep(axes_left - 1, '\n');
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (summary && k == kEdgeItems) s += indent + "..." + line_sep;
      s += indent + child(idx[k]);
      if (k + 1 < idx.size()) s += line_sep;
    }
  }
  std::string out = "[";
  out.append(s, indent.size()).append("]");
  return out;
}

// array2string for str(): empty -> "[]"; 0-d -> the scalar; else the nested layout.
template <class T>
std::string format_any(const xt::xarray<T>& arr, const std::function<std::string(T)>& scalar) {
  if (arr.dimension() == 0) return scalar(arr());
  if (arr.size() == 0) return "[]";
  Layout<T> a;
  // Copy into C order so that offsets are plain row-major strides whatever arr's layout.
  std::vector<T> values(arr.begin(), arr.end());
  a.data = values.data();
  a.shape.assign(arr.shape().begin(), arr.shape().end());
  a.strides.assign(a.shape.size(), 1);
  for (std::size_t k = a.shape.size() - 1; k > 0; --k) a.strides[k - 1] = a.strides[k] * a.shape[k];
  a.summarize = arr.size() > kThreshold;
  std::vector<T> shown;
  a.collect(0, 0, shown);
  const FloatingFormat<T> fmt(shown);
  return format_nested(a, fmt, 0, 0, " ", kLineWidth);
}

// Python's float repr rule on shortest digits: positional when -4 <= exp10 < 16.
template <class T>
std::string shortest_repr(T x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  const Decimal d = shortest(x);
  const std::string sign = d.negative ? "-" : "";
  if (d.exp10 < -4 || d.exp10 >= 16) {
    std::string out = sign;
    out.push_back(d.digits[0]);
    if (d.digits.size() > 1) out.append(".").append(d.digits, 1);
    return out.append("e").append(exponent_text(d.exp10, 2));
  }
  const Pieces p = positional(x, 1000, false);
  return p.int_part + "." + (p.frac.empty() ? "0" : p.frac);
}

}  // namespace

std::string format_array(const xt::xarray<double>& a) {
  return format_any<double>(a, [](double x) { return python_float_repr(x); });
}

std::string format_float32_array(const xt::xarray<float>& a) {
  return format_any<float>(a, [](float x) { return shortest_repr(x); });
}

std::string format_shape(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string python_bool(bool b) { return b ? "True" : "False"; }

std::string python_float_repr(double x) { return shortest_repr(x); }

// Python right-aligns every number in a field; fmt 9 left-aligns "inf"/"nan" unless told.
// For a non-finite x and a spec without an alignment ("{:8.4f}"), make it "{:>8.4f}".
std::string python_format(const std::string& spec, double x) {
  if (std::isfinite(x)) return fmt::format(fmt::runtime(spec), x);
  const std::size_t colon = spec.find(':');
  if (colon == std::string::npos) return fmt::format(fmt::runtime(spec), x);
  const std::string body = spec.substr(colon + 1);
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  const bool aligned = (!body.empty() && is_align(body[0])) || (body.size() > 1 && is_align(body[1]));
  if (aligned) return fmt::format(fmt::runtime(spec), x);
  return fmt::format(fmt::runtime(spec.substr(0, colon + 1) + ">" + body), x);
}

// NumPy's power_of_ten: exact literals up to 1e8, then repeated multiplication by 10.
static double power_of_ten(int n) {
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  if (n < 9) return p10[n];
  double r = 1e9;
  while (n-- > 9) r *= 10.0;
  return r;
}

double round_half_even(double x, int decimals) {
  if (decimals >= 0) {
    const double f = power_of_ten(decimals);
    return std::nearbyint(x * f) / f;
  }
  const double f = power_of_ten(-decimals);
  return std::nearbyint(x / f) * f;
}

}  // namespace vl::numpy
