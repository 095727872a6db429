#pragma once
// Lesson linear-family: what its checks share (linear_family.cpp, linear_family_identities.cpp):
// the forms a sweep runs, one call of the judged backend, ONNX's recurrence as the reference, the
// relative gap and the worst gap seen per rule.
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "engine/lesson.hpp"
#include "lessons/linear_family/linear_family.hpp"
#include "numeric/compare.hpp"
#include "numeric/precision.hpp"

namespace vl::lessons::linear_family {

/// Chunk sizes for n tokens: 1, 2, 3, 5, the divisors of n, n, n + 3 and ONNX's default 64.
std::vector<std::size_t> chunk_sizes(std::size_t n);

/// A form as a sweep runs it: recurrent, parallel, or chunked at a chunk size.
struct FormAt {
  FamilyForm form;
  std::size_t chunk;
  std::string name() const;
};
/// Recurrent, parallel and chunked at each of chunk_sizes(n).
std::vector<FormAt> forms(std::size_t n);

/// One call of the judged backend's linear_family operation.
template <class T>
FamilyResult<T> run(const backends::Backend& b, const FamilyInputs<T>& in, UpdateRule rule, FamilyForm form, std::size_t chunk = 64,
                    std::optional<double> scale = {}) {
  return b.linear_family(in, FamilyOptions{rule, form, chunk, scale});
}

/// ONNX's definition, the recurrence token by token (our kernel of it), in float64.
FamilyResult<double> definition(const FamilyInputs<double>& in, UpdateRule rule, std::optional<double> scale = {});

/// max|a − b| / max|b| (∞ for a NaN or a wrong shape; the absolute gap when b is all zeros).
template <class A, class B>
double relative(const A& a, const B& b) {
  double scale = 0;
  for (auto x : b) scale = worse(scale, std::fabs(double(x)));
  return max_abs_diff(a, b) / (scale > 0 ? scale : 1.0);
}

/// The larger relative gap of the outputs and of the states.
template <class T>
double gap(const FamilyResult<T>& a, const FamilyResult<double>& b) {
  return std::max(relative(a.o, b.o), relative(a.state, b.state));
}

/// The largest gap seen and where, overall and per rule.
struct Worst {
  double value = 0;
  std::string where;
  std::map<std::string, double> per_rule;
  void see(double g, UpdateRule rule, const std::string& at);
  std::string rules() const;
};

/// A check's measurement from its worst gap: the value, where, per rule and what was compared.
Measurement measured(const Worst& w, const std::string& what);

/// A check's inputs as the judged backend holds them: rounded once to the precision it computes in
/// (CheckContext::precision), so that its references, computed in float64, start from the same numbers.
FamilyInputs<double> rounded(Precision p, FamilyInputs<double> in);

}  // namespace vl::lessons::linear_family
