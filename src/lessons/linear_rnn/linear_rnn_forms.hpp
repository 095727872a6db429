#pragma once
// The judged backend's three forms of causal linear attention, and a sweep run on each form it
// has (a form it lacks is named and left out), for linear-rnn's fixed and generated checks.
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/backend.hpp"
#include "numeric/precision.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"

namespace vl::lessons::linear_rnn::detail {

// One form of causal linear attention as the judged backend computes it: φ(Q), φ(K), V → O.
struct Form {
  std::string name;
  std::function<Matrix(const Matrix& pq, const Matrix& pk, const Matrix& v)> run;
};

// The backend's three forms, the chunked one at chunk size `chunk`.
inline std::vector<Form> forms_of(const backends::Backend& b, std::size_t chunk) {
  return {{"parallel", [&b](const Matrix& pq, const Matrix& pk, const Matrix& v) { return b.linear_parallel(pq, pk, v); }},
          {"recurrent", [&b](const Matrix& pq, const Matrix& pk, const Matrix& v) { return b.linear_recurrent(pq, pk, v); }},
          {fmt::format("chunked B={}", chunk),
           [&b, chunk](const Matrix& pq, const Matrix& pk, const Matrix& v) { return b.linear_chunked(pq, pk, v, chunk); }}};
}

// What a sweep found in one form: its largest deviation and where, and any other failure.
struct Finding {
  double worst = 0;
  std::string where;
  std::string failure;  // empty: none
};

// The findings of every form the backend has, merged.
struct Findings {
  double worst = 0;
  std::string where;
  std::vector<std::string> failures, checked, lacking;

  /// "forms checked: …" and, when some were lacking, which and why.
  std::string forms() const {
    std::string s = fmt::format("forms checked: {}", fmt::join(checked, ", "));
    if (!lacking.empty()) s += fmt::format("; not available: {}", fmt::join(lacking, "; "));
    return s;
  }
};

// Runs `sweep` on each form the backend has, so that a backend with some of the forms is
// judged on those. A form it lacks (Unsupported) is left out and named; a backend with none
// throws Unsupported: the claim is then not applicable, never passed on nothing.
template <class Sweep>
Findings over_each_form(const std::vector<Form>& forms, const std::string& where_if_none, Sweep sweep) {
  Findings all;
  all.where = where_if_none;
  backends::Need lacking = backends::Op::linear_parallel;
  for (const Form& form : forms) {
    Finding f;
    try {
      f = sweep(form);
    } catch (const backends::Unsupported& e) {
      all.lacking.push_back(e.what());
      lacking = e.need;
      continue;
    }
    all.checked.push_back(form.name);
    if (f.worst > all.worst) { all.worst = f.worst; all.where = f.where; }
    if (!f.failure.empty()) all.failures.push_back(f.failure);
  }
  if (all.checked.empty())
    throw backends::Unsupported(lacking, fmt::format("no form of causal linear attention: {}", fmt::join(all.lacking, "; ")));
  return all;
}

/// Each output of `form` on `in` against the running min/max of the values (as rounded to p), column
/// by column: the largest excursion outside it over max|v| (a NaN output: ∞), and where (`label`
/// names the inputs).
Finding convex_excursion(const Form& form, const Inputs& in, Precision p, const std::string& label);

/// `form` on `a` with the tokens after t replaced by `fresh`'s (t < n − 1), against `out_a`, its
/// outputs on `a`: the largest move of an output at or before t, and a failure if no output after t
/// moved (the change proved nothing).
Finding prefix_moves(const Form& form, const Inputs& a, const Matrix& out_a, const Inputs& fresh, std::size_t t, const std::string& label);

}  // namespace vl::lessons::linear_rnn::detail
